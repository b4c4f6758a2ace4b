// Defaults of gate --against (A/B in one run), kept apart so that gate's --help loads no profiling code.

/** Default pairs of rounds: 16 short profiles, A B B A four times: at 2% noise a round, a 10% slowdown is caught at a 5% budget about 97 times in 100 (test/gate/paired.test.ts). */
export const DEFAULT_PAIRS = 8;
/** Default measured iterations of a round, as typed: its own pace to a few per cent, short enough for CI. */
export const DEFAULT_ROUND_ITERATIONS = '100';
/**
 * Default rounds in slices (--epochs later): 10 launches of both versions. Each launch carries an offset of its own (on
 * train.py one A/A round read +6.0%, and the rounds' changes spread by 2.5%: docs/ci.md), so the change is judged over
 * rounds; at that spread 10 rounds catch a 10% slowdown at a 5% budget nearly always, in about 6 minutes.
 */
export const DEFAULT_SLICED_ROUNDS = 10;
/**
 * Default seconds of each version inside its slices in a sliced round: warming up (the interpreter's start, the first
 * loader workers, the allocator), then measured. --max-iterations counts iterations instead, as many each.
 */
export const DEFAULT_SLICED_SEC = { warmUp: 5, measured: 10 } as const;
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
