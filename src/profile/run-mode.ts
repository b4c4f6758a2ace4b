// One run of the job in one mode: a launch of one block (run-launch.ts).
import type { ModeResult } from '../schema/profile.js';
import type { ModeRunInput } from './run-input.js';
import { runLaunch } from './run-launch.js';

export type { ModeProgress, ModeRunInput } from './run-input.js';

/** Runs the job once in `input.mode`: sets the cache state, supervises, collects, proves the state. */
export async function runMode(input: ModeRunInput): Promise<ModeResult> {
  const { mode, cacheState, precision, minIterations, maxIterations, minStopBlocks, ...rest } = input;
  const label = mode;
  const { results } = await runLaunch({
    ...rest,
    blocks: [
      {
        mode,
        label,
        cacheState,
        precision,
        minIterations,
        maxIterations,
        ...(minStopBlocks !== undefined ? { minStopBlocks } : {}),
      },
    ],
  });
  return results[0];
}
