/**
 * --workers: loader workers per rank, DataLoader num_workers (Scenario.workers): W in the workers' cap on prep, N · u /
 * eff_w(W); with W = 0 the stages add up (docs/whatif.md).
 */
import { ExitCode, UserError } from '../../errors.js';
import { parseCountList } from '../../units.js';
import type { Knob } from './knob.js';
import { KNOB_TEXT } from './knob-text.js';

export const WORKERS_KNOB: Knob<number> = {
  name: 'workers',
  flag: {
    syntax: '--workers <n>',
    help: 'loader workers per rank, DataLoader num_workers (default: as profiled; 0 loads in the training process)',
  },
  field: 'workers',
  parse: (text) => {
    const counts = parseCountList(text, '--workers');
    if (counts.length !== 1) {
      throw new UserError(KNOB_TEXT.oneWorkersCount(text), ExitCode.BadValue);
    }
    return counts[0];
  },
  validateFlag: (model, scenario) => {
    // The script's count, or one a workers sweep ran (0: a sweep at 0 measured the serial prep), was measured already.
    const measured =
      scenario.workers === 0
        ? model.serialPrepSecPerSample !== null
        : model.workersPoints.some((p) => p.workers === scenario.workers);
    return measured ? null : `--workers ${scenario.workers}`;
  },
};
