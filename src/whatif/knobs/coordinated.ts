/** --coordinated: with --jobs, one fetch and prep of each sample for all the jobs (Scenario.coordinated, CoorDL). */
import { ExitCode, UserError } from '../../errors.js';
import type { Knob } from './knob.js';
import { KNOB_TEXT } from './knob-text.js';

export const COORDINATED_KNOB: Knob<boolean> = {
  name: 'coordinated',
  flag: {
    syntax: '--coordinated',
    help: 'with --jobs: the asked scenario has the jobs share one fetch and prep of each sample',
  },
  field: 'coordinated',
  reads: ['jobs'],
  parse: (_text, asked) => {
    if ((asked.jobs ?? 1) < 2) {
      throw new UserError(KNOB_TEXT.coordinatedNeedsJobs, ExitCode.Usage);
    }
    return true;
  },
};
