// Messages of the keepers' errors, shown to users: one line each, with the cause and the fix. cold-keeper.ts and
// cache-cap.ts decide; the words live here.

/** Messages of keeping a dataset cold or its page cache capped (one line each: cause, fix). */
export const KEEPER_TEXT = {
  cannotKeepCold: (reason: string) =>
    `the cold mode cannot keep the dataset cold here: ${reason}; run on Linux with glibc`,
  cannotCap: (reason: string) => `cannot cap the dataset's page cache here: ${reason}`,
} as const;
