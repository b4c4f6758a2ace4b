// Defaults of gate --against (A/B in one run), kept apart so that gate's --help loads no profiling code.

/** Default pairs of rounds: 12 short profiles, A B B A three times. */
export const DEFAULT_PAIRS = 6;
/** Default measured iterations of a round, as typed: its own pace to a few per cent, short enough for CI. */
export const DEFAULT_ROUND_ITERATIONS = '120';
