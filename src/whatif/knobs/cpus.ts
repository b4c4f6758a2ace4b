/** --cpus: the CPUs of the server (Scenario.cpus): c in the CPUs' cap on prep, N · (u + k_s / X) / eff(c). */
import { parsePositiveInt } from '../../units.js';
import type { Knob } from './knob.js';

export const CPUS_KNOB: Knob<number> = {
  name: 'cpus',
  flag: { syntax: '--cpus <n>', help: 'CPUs of the server (default: as profiled)' },
  field: 'cpus',
  parse: (text) => parsePositiveInt(text, '--cpus'),
  validateFlag: (model, scenario) => {
    // validate restricts CPUs with an affinity mask: it cannot add any.
    if (scenario.cpus > model.profiledCpus) return null;
    // The profiled count, or one a CPU sweep ran, was measured already.
    const swept = model.cpuScaling.kind === 'fitted' && model.cpuScaling.points.some((p) => p.cpus === scenario.cpus);
    return scenario.cpus === model.profiledCpus || swept ? null : `--cpus ${scenario.cpus}`;
  },
};
