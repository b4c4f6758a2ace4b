/**
 * The contract of `ds-analyzer doctor --json` (docs/json-output.md). doctorOutput() types what
 * src/system/probes/diagnose.ts finds against this schema.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';

/** Version of doctor's JSON; bump when a field is removed or changes meaning (adding one does not). */
export const DOCTOR_OUTPUT_VERSION = 1;

/** One capability the profiler uses, as found on this machine. */
export const CapabilityRowSchema = z.object({
  /**
   * Its name: root, cgroup, page-cache-eviction, residency, storage-throttle, drop-caches, nvidia-smi, python-torch,
   * no-proactive-reclaim (the list may grow).
   */
  name: z.string(),
  /** Whether it works here. */
  available: z.boolean(),
  /** What was found, one line. */
  detail: z.string(),
  /** What a profile loses without it. */
  impact: z.string(),
  /** How to get it. */
  fix: z.string(),
});

/** The file system holding one `--data` folder. */
export const DatasetFileSystemSchema = z.object({
  /** The folder as given (absolute). */
  root: z.string(),
  /** Where its file system is mounted. */
  mountPoint: z.string(),
  /** The file system's type as /proc/self/mountinfo names it (ext4, tmpfs, nfs4, fuse.s3fs). */
  type: z.string(),
  /** Its source (/dev/vda1, server:/export, s3fs). */
  source: z.string(),
  /** What it lets the cache modes prove: a local disk, memory, overlay, network, fuse or other. */
  kind: z.enum(['disk', 'memory', 'overlay', 'network', 'fuse', 'other']),
});

/** The Python a job's command gets (PATH lookup as the job sees it). */
export const JobPythonSchema = z.object({
  /** The command looked up: python3, or the path given with --python. */
  command: z.string(),
  /** The executable it resolves to, or null when none is found. */
  path: z.string().nullable(),
  /** The PATH it was looked up in (the job inherits it). */
  searchPath: z.string(),
  /** SUDO_USER when doctor runs as root under sudo, else null. */
  sudoUser: z.string().nullable(),
  /** The active virtual environment (VIRTUAL_ENV, else CONDA_PREFIX), or null. */
  virtualEnv: z.string().nullable(),
  /**
   * Why the job may not get the Python its user means (sudo's secure_path, a venv not on PATH), with the fix; null when
   * nothing looks wrong.
   */
  warning: z.string().nullable(),
});

export const DoctorOutputSchema = z.object({
  ...outputHeader(DOCTOR_OUTPUT_VERSION, 'doctor'),
  /** Every capability, in display order. */
  capabilities: z.array(CapabilityRowSchema),
  /** The capabilities named in --require, in the order given; empty without it. */
  required: z.array(z.string()),
  /** Those of `required` that are missing here; the exit code is 11 when this is not empty. */
  missingRequired: z.array(z.string()),
  /** With --data: the file system of each folder that resolved to one; null without --data. */
  dataset: z.array(DatasetFileSystemSchema).nullable(),
  /** With --data: the folders that resolve to no mounted file system (missing folders, most often). */
  unresolved: z.array(z.string()),
  /** With --data: what those file systems keep the cached and cold modes from proving, one sentence each. */
  fileSystemWarnings: z.array(z.string()),
  /** The python3 a profiled job's command will get, and under sudo whether it is the user's. */
  python: JobPythonSchema,
});
export type DoctorOutput = z.infer<typeof DoctorOutputSchema>;

/** The printed object: the header first, then what doctor found. */
export function doctorOutput(body: Omit<DoctorOutput, 'schemaVersion' | 'kind'>): DoctorOutput {
  return { schemaVersion: DOCTOR_OUTPUT_VERSION, kind: 'doctor', ...body };
}
