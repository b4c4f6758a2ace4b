// What `ds-analyzer doctor` finds: every capability the profiler uses, and for dataset folders their file systems and
// what those keep the cache modes from proving.
import { probeCapabilities, type Capability } from './capabilities.js';
import type { CapabilityName } from './capability-text.js';
import { jobPython, type JobPython } from './job-python.js';
import { fileSystemWarnings, rootFileSystems, type RootFileSystem } from '../dataset/file-systems.js';

/** What doctor is asked to look at. */
export interface DiagnoseInput {
  /** nvidia-smi command to probe the GPUs with. */
  nvidiaSmi: string;
  /** The caller's working directory: the storage throttle is tried on its disk. */
  cwd: string;
  /** A delegated cgroup v2 group to try job groups under (DSA_CGROUP_PARENT), if any. */
  cgroupParent?: string;
  /** Absolute dataset folders whose file systems to name (doctor --data), or null for none. */
  dataDirs: string[] | null;
  /** The environment the job would inherit: its PATH finds the job's python3, its SUDO_USER says sudo ran the CLI. */
  env: NodeJS.ProcessEnv;
  /** The interpreter given with --python, if any. */
  python?: string;
}

/** What doctor found. */
export interface Diagnosis {
  /** Every capability, in CAPABILITY_NAMES order, with what was found. */
  capabilities: Capability[];
  /** The file system of each dataset folder that resolved to one; null without dataDirs. */
  dataset: RootFileSystem[] | null;
  /** Dataset folders that resolve to no mounted file system (missing folders, most often). */
  unresolved: string[];
  /** What the dataset's file systems keep the cached and cold modes from proving, one sentence each. */
  fileSystemWarnings: string[];
  /** The python3 the job's command will get, and under sudo whether that is the user's. */
  python: JobPython;
}

/** Probes the machine, and the dataset folders' file systems when asked. */
export async function diagnose(input: DiagnoseInput): Promise<Diagnosis> {
  const python = jobPython(input.env, input.cwd, process.geteuid?.() ?? -1, input.python);
  // torch is checked in the job's interpreter first (python-torch is about that one), then in Debian's.
  const pythons = [...new Set([python.path ?? python.command, '/usr/bin/python3'])];
  const capabilities = await probeCapabilities({
    nvidiaSmi: input.nvidiaSmi,
    cwd: input.cwd,
    cgroupParent: input.cgroupParent,
    pythons,
  });
  const dataset = input.dataDirs ? await rootFileSystems(input.dataDirs) : null;
  return {
    capabilities,
    dataset,
    unresolved: dataset ? (input.dataDirs ?? []).filter((dir) => !dataset.some((d) => d.root === dir)) : [],
    fileSystemWarnings: dataset ? fileSystemWarnings(dataset) : [],
    python,
  };
}

/** The capabilities among `required` that this diagnosis found missing, in CAPABILITY_NAMES order. */
export function missingRequired(
  diagnosis: Pick<Diagnosis, 'capabilities'>,
  required: readonly CapabilityName[],
): Capability[] {
  return diagnosis.capabilities.filter((c) => required.includes(c.name) && !c.available);
}
