// Defaults of gate --against (A/B in one run), kept apart so that gate's --help loads no profiling code.

/** Default pairs of rounds: 16 short profiles, A B B A four times: at 2% noise a round, a 10% slowdown is caught at a 5% budget about 97 times in 100 (test/gate/paired.test.ts). */
export const DEFAULT_PAIRS = 8;
/** Default measured iterations of a round, as typed: its own pace to a few per cent, short enough for CI. */
export const DEFAULT_ROUND_ITERATIONS = '100';
/** gate's flags that belong to --against alone (the rounds' own and the profile flags passed on to them). */
export const AGAINST_ONLY_FLAGS = [
  'data',
  'rounds',
  'maxIterations',
  'timeout',
  'outDir',
  'allowConcurrent',
  'python',
  'asUser',
] as const;
