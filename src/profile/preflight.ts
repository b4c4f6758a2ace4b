import { allowedCpus, withCpus } from '../system/cgroups/affinity.js';
import { assertCommandExists } from '../system/kernel/resolve-command.js';

/**
 * What would otherwise fail minutes into a profile: the job's command is found, and each CPU count of the sweep fits
 * the CPUs this process may use, with taskset there. A UserError naming the cause and the flag.
 */
export function assertRunnable(input: {
  /** The job's command. */
  argv: string[];
  /** Where a relative command is looked up. */
  cwd: string;
  /** The job's environment (its PATH finds the command and taskset). */
  env: NodeJS.ProcessEnv;
  /** CPU counts of profile --cpus. */
  cpuSweep?: number[];
}): void {
  assertCommandExists(input.argv[0], input.env.PATH, input.cwd);
  if (!input.cpuSweep?.length) return;
  const allowed = allowedCpus();
  for (const count of input.cpuSweep) withCpus(count, ['true'], input.env.PATH, allowed);
}
