// Messages of profile's flag errors, shown to users: one line each, with the cause and the fix (exit code 2 for flags
// that do not go together, 3 for a value that does not parse).

/** Messages of profile's own flag errors. */
export const PROFILE_TEXT = {
  gateFlagsWithoutGate: '--baseline and --junit need --gate CONFIG: name the budgets to check',
  noCommand: "no training command: put it after '--', e.g. ds-analyzer profile --data ./ds -- python train.py",
  dataTwice: "--data and --remote name the job's data twice: give one",
  noData:
    '--data is required: pass the folder the job reads its samples from (or --remote URL for data in object ' +
    'storage or at HTTP URLs)',
  remoteOnlyFlags: '--endpoint, --proxy-port, --job-cache and --net-meter apply to --remote data only',
  overlapOneNode: (nodes: number) =>
    `--overlap runs on one node only: profile the ${nodes} nodes without it, or one node with it`,
  jobCacheHolds: (dir: string, held: string) =>
    `--job-cache ${dir}: its files are deleted in the cold mode, and it holds ${held}: name the job's cache ` +
    'folder itself (its cache_dir or local setting)',
  notANetMeter: (text: string) =>
    `--net-meter: '${text}' is not a meter: use client (in the job's HTTP clients) or proxy`,
  unknownMode: (mode: string, modes: readonly string[]) =>
    `--modes: unknown mode '${mode}'; use any of ${modes.join(', ')}`,
  modesTwice: (modes: readonly string[]) => `--modes must list each of ${modes.join(', ')} at most once`,
  continueWith: (flag: string) =>
    `--continue rides the real run, where ${flag} has no place (it needs launches of its own, or would stay in ` +
    `the run's way to its end): drop ${flag}, or profile without --continue`,
} as const;
