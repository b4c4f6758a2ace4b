import { resolve } from 'node:path';
import { Command } from 'commander';
import { ExitCode, UserError } from '../errors.js';
import { diagnose, missingRequired, type Diagnosis, type DiagnoseInput } from '../system/probes/diagnose.js';
import { CAPABILITY_NAMES, requiredMissingText, unknownCapabilityText, type CapabilityName } from '../system/probes/capability-text.js';
import { doctorJson, renderDoctor } from '../report/doctor-terminal.js';
import { collect, withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';

/** The exit codes `doctor` can return, in its --help and docs/cli.md. */
const DOCTOR_EXIT_CODES: ExitCodeList = [
  { code: ExitCode.Ok, meaning: 'success: the table is printed, whatever is missing (unless --require names it)' },
  ExitCode.Usage,
  { code: ExitCode.BadValue, meaning: '--require names a capability doctor does not check' },
  ExitCode.Internal,
  { code: ExitCode.MissingCapability, meaning: 'a capability named in --require is missing here (stderr names it; its fix is in the table)' },
];

/** doctor with the machine probed by `diagnoseMachine`: the real probes, or a fake in tests. */
export function doctorCommandWith(diagnoseMachine: (input: DiagnoseInput) => Promise<Diagnosis>): CommandFactory {
  return (io, result) => {
    const command = new Command('doctor')
      .description('show what this machine allows the profiler to do, and what each missing piece costs')
      .option('--json', 'print what was found as JSON (docs/json-output.md)')
      .option('--data <dir>', "also name the file system of a dataset folder and what it lets the cache modes prove (repeatable)", collect)
      .option('--require <list>', `exit with code ${ExitCode.MissingCapability} when any of these capabilities is missing, e.g. storage-throttle,python-torch (a CI pre-flight check); any of ${CAPABILITY_NAMES.join(', ')}`)
      .addHelpText(
        'after',
        `
Examples:
  $ ds-analyzer doctor
  $ sudo ds-analyzer doctor --json
  $ ds-analyzer doctor --data /mnt/imagenet
  $ ds-analyzer doctor --require python-torch,residency      (in CI, before profiling)`,
      )
      .action(async (options: { json?: boolean; data?: string[]; require?: string }) => {
        const required = options.require === undefined ? [] : parseCapabilityList(options.require);
        const diagnosis = await diagnoseMachine({
          nvidiaSmi: io.env.DSA_NVIDIA_SMI ?? 'nvidia-smi',
          cwd: io.cwd,
          cgroupParent: io.env.DSA_CGROUP_PARENT,
          dataDirs: options.data ? options.data.map((dir) => resolve(io.cwd, dir)) : null,
        });
        io.stdout(options.json ? JSON.stringify(doctorJson(diagnosis, required), null, 1) + '\n' : renderDoctor(diagnosis));
        const missing = missingRequired(diagnosis, required);
        if (missing.length > 0) io.stderr(`ds-analyzer: ${requiredMissingText(missing.map((c) => c.name), Boolean(options.json))}\n`);
        result.exitCode = missing.length > 0 ? ExitCode.MissingCapability : ExitCode.Ok;
      });
    return withExitCodes(command, DOCTOR_EXIT_CODES);
  };
}

export const doctorCommand: CommandFactory = doctorCommandWith(diagnose);

/** --require: capability names, comma-separated; an unknown one is exit code 3. */
function parseCapabilityList(text: string): CapabilityName[] {
  const names = text.split(',').map((name) => name.trim()).filter(Boolean);
  for (const name of names) {
    if (!(CAPABILITY_NAMES as readonly string[]).includes(name)) throw new UserError(unknownCapabilityText(name), ExitCode.BadValue);
  }
  if (names.length === 0) throw new UserError(unknownCapabilityText(text), ExitCode.BadValue);
  return [...new Set(names)] as CapabilityName[];
}
