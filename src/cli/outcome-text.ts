// Messages of a profile run's outcome that end it as an error, shown to users: one line each, with the cause and the
// fix. run-and-report.ts decides; the words live here.

/** Messages of a profile run's outcome (one line each: cause, fix). */
export const OUTCOME_TEXT = {
  /** `saved` says what of the profile was saved, and where. */
  noProtocolEvent: (eventsDir: string, lines: number, saved: string) =>
    `the job's events in ${eventsDir} hold ${lines} line(s) and none is a protocol v1 event: ` +
    `see docs/protocol.md; ${saved}`,
  /** A run that stalled (analysis/stalls.ts): why and when, what was kept, and what to do. */
  stalled: (run: string, text: string, saved: string, fix: string) =>
    `the ${run} block stalled: ${text}; it is kept in the profile, marked stalled and left out of the verdict; ` +
    `${saved}; ${fix}`,
} as const;
