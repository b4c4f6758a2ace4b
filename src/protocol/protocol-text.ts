// Messages of the event writer's errors, shown to a job's user: one line
// each, with the cause and the fix. writer.ts decides; the words live here.

/** Messages of the event writer (one line each: cause, fix). */
export const PROTOCOL_TEXT = {
  /** `modeVar` and `eventsDirVar` are the variables' names (ENV.mode, ENV.eventsDir). */
  noEventsDir: (modeVar: string, eventsDirVar: string) =>
    `${modeVar} is set but ${eventsDirVar} is not: set both (ds-analyzer does) or neither`,
} as const;
