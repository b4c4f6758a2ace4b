// Messages of the event writer's errors, shown to a job's user: one line each, with the cause and the fix. writer.ts
// decides; the words live here.

/** Messages of the event writer (one line each: cause, fix). */
export const PROTOCOL_TEXT = {
  /** `modeVar` and `eventsDirVar` are the variables' names (ENV.mode, ENV.eventsDir). */
  noEventsDir: (modeVar: string, eventsDirVar: string) =>
    `${modeVar} is set but ${eventsDirVar} is not: set both (ds-analyzer does) or neither`,
  notNonNegative: (name: string, text: string) => `${name}='${text}' is not a non-negative integer: fix or unset it`,
  notAMode: (name: string, text: string) =>
    `${name}='${text}' is not a mode: use synthetic, cached or cold, or unset it`,
  otherProtocol: (name: string, asked: string, spoken: number) =>
    `${name}='${asked}' asks for an event protocol this writer does not speak (it writes ` +
    `version ${spoken}): use matching versions of ds-analyzer and the job`,
  notPositive: (name: string, text: string) => `${name}='${text}' is not a positive integer: fix or unset it`,
} as const;
