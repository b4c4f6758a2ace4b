// Messages of the emulated job's errors, shown to users: one line each, with the cause, the flag and the fix. job.ts
// decides; the words live here.

/** Messages of the emulated job (one line each: cause, flag, fix). */
export const EMULATOR_TEXT = {
  remoteNeedsWorkers: '--remote-base needs loader workers (--workers 1 or more)',
  noDatasetFolder: (dir: string) =>
    `dataset folder ${dir} does not exist: pass the folder of a generated dataset with --data`,
  noSamples: (dir: string) => `dataset folder ${dir} holds no sample-NNNNN.bin files: generate a dataset there first`,
} as const;
