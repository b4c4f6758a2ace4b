/**
 * The words of `ds-analyzer clean`: one line per thing it found, what it did or would do, and the flag that does the
 * rest. Kept apart from the logic (STYLE.md, "Words").
 */
import { formatBytes } from '../units.js';

const list = (pids: { pid: number; command: string | null }[]): string =>
  pids
    .slice(0, 5)
    .map((p) => `${p.pid}${p.command ? ` ${p.command.length > 60 ? p.command.slice(0, 57) + '...' : p.command}` : ''}`)
    .join('; ') + (pids.length > 5 ? `; and ${pids.length - 5} more` : '');

export const CLEAN_TEXT = {
  cgroupRemoved: (dir: string, dryRun: boolean): string =>
    `${dryRun ? 'would remove' : 'removed'} the empty cgroup ${dir}, left by a run that was killed`,
  cgroupInUse: (dir: string, pid: number, command: string | null): string =>
    `kept the cgroup ${dir}: the process that made it still runs (${list([{ pid, command }])}); run clean again ` +
    `once it has ended`,
  cgroupHolds: (dir: string, pids: { pid: number; command: string | null }[]): string =>
    `kept the cgroup ${dir}: ${pids.length} process${pids.length === 1 ? '' : 'es'} of a killed run still in it (${list(pids)}); stop ${pids.length === 1 ? 'it' : 'them'}, or run 'ds-analyzer clean --force' to kill ${pids.length === 1 ? 'it' : 'them'} and remove the group`,
  cgroupKilled: (dir: string, pids: { pid: number; command: string | null }[], dryRun: boolean): string =>
    dryRun
      ? `would kill ${pids.length} process${pids.length === 1 ? '' : 'es'} of a killed run (${list(pids)}) and remove the cgroup ${dir}`
      : `killed ${pids.length} process${pids.length === 1 ? '' : 'es'} of a killed run (${list(pids)}) and removed the cgroup ${dir}`,
  cgroupFailed: (dir: string, code: string): string =>
    `could not remove the cgroup ${dir} (${code}): remove it as root with 'rmdir ${dir}' once it is empty`,
  noCgroups: (roots: string[]): string =>
    roots.length === 0
      ? 'cgroups: none to look at here (no writable cgroup controller)'
      : `cgroups: no ds-analyzer-* group left (looked in ${roots.join(', ')})`,
  reclaimRestored: (names: string[], pid: number, dryRun: boolean): string =>
    `${dryRun ? 'would turn' : 'turned'} DAMON's reclaim back on (${names.join(' and ')}), paused by ds-analyzer ${pid}, which is gone`,
  reclaimInUse: (pid: number, command: string): string =>
    `DAMON's reclaim is paused by a run that still goes on (${list([{ pid, command }])}): it turns it back on ` +
    `when it ends`,
  reclaimFailed: (failures: string[], file: string): string =>
    `could not turn DAMON's reclaim back on (${failures.join('; ')}): run 'ds-analyzer clean' as root; the record stays in ${file}`,
  reclaimUnreadable: (file: string): string =>
    `the record of a DAMON pause ${file} does not parse: check /sys/kernel/mm/damon/admin/kdamonds/*/state by ` +
    `hand, then delete it`,
  noReclaimPause: 'DAMON: no reclaim pause left behind',
  demoKept: (path: string, bytes: number): string =>
    `kept the demo dataset ${path} (${formatBytes(bytes)}): 'ds-analyzer clean --cache' removes it`,
  demoRemoved: (path: string, bytes: number, dryRun: boolean): string =>
    `${dryRun ? 'would remove' : 'removed'} the demo dataset ${path} (${formatBytes(bytes)})`,
  noDemo: (dir: string): string => `cache: no demo dataset in ${dir}`,
  copyKept: (path: string, bytes: number): string =>
    `kept a copy of remote data ${path} (${formatBytes(bytes)}), the objects a profile that was stopped before its ` +
    `end fetched for its cached mode: 'ds-analyzer clean --cache' removes it`,
  copyRemoved: (path: string, bytes: number, dryRun: boolean): string =>
    `${dryRun ? 'would remove' : 'removed'} a copy of remote data ${path} (${formatBytes(bytes)}), left by a ` +
    'profile stopped before its end',
  artefactsKept: (path: string, bytes: number, what: string): string =>
    `kept ${what} ${path} (${formatBytes(bytes)}): 'ds-analyzer clean --artifacts' removes it`,
  artefactsRemoved: (path: string, bytes: number, what: string, dryRun: boolean): string =>
    `${dryRun ? 'would remove' : 'removed'} ${what} ${path} (${formatBytes(bytes)})`,
  noArtefacts: (profilesDir: string, reportsDir: string): string =>
    `artefacts: no profile folder (*.d) in ${profilesDir}, no validate-* folder in ${reportsDir}`,
  removeFailed: (path: string, code: string): string => `could not remove ${path} (${code}): check its permissions`,
  pageCache:
    "page cache: nothing to restore (profile evicts only the dataset's own pages, which the next read brings back)",
  dryRun: 'dry run: nothing was changed',
} as const;

/** What each kind of artefact folder is, in words. */
export const ARTEFACT_WORDS = {
  profile: "the profile's artefacts (the job's logs and events)",
  validate: "validate's work folder",
} as const;
