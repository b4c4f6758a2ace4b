// Defaults of gate --against (A/B in one run), kept apart so that gate's --help loads no profiling code.

/** Default pairs of rounds: 16 short profiles, A B B A four times: at 2% noise a round, a 10% slowdown is caught at a 5% budget about 97 times in 100 (test/gate/paired.test.ts). */
export const DEFAULT_PAIRS = 8;
/** Default measured iterations of a round, as typed: its own pace to a few per cent, short enough for CI. */
export const DEFAULT_ROUND_ITERATIONS = '100';
/**
 * Default rounds in slices (--epochs later): 5 launches of both versions. Each launch carries an offset of its own (A/A
 * launches of train.py differed by 0.6% at most, the change between two versions by 2.3%: docs/ci.md), so the change
 * is judged over launches; at that spread 5 catch a 10% slowdown at a 5% budget about 98 times in 100.
 */
export const DEFAULT_SLICED_ROUNDS = 5;
/**
 * Default seconds of each version inside its slices in a sliced round: warming up (the interpreter's start, the first
 * loader workers, the allocator), then measured. --max-iterations counts iterations instead, as many each.
 */
export const DEFAULT_SLICED_SEC = { warmUp: 10, measured: 20 } as const;
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
