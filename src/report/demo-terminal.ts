/**
 * What `ds-analyzer demo` prints after the profile summary: the measured split
 * next to the emulator's settings, the what-if at no cache, and what to try next.
 */
import type { Profile } from '../schema/profile.js';
import { impliedSplit, type EmulatorSettings } from '../emulator/expected.js';
import { formatBytes, formatRate } from '../units.js';
import type { WhatifResult } from '../whatif/whatif.js';
import { table } from './format.js';

/** Measured split next to what the emulator's settings imply: the demo checks itself. */
export function renderSettingsCheck(profile: Profile, settings: EmulatorSettings): string {
  const implied = impliedSplit(settings);
  const a = profile.analysis;
  const rows = [['per iteration', 'set by the emulator', 'measured', 'error']];
  const add = (name: string, expected: number | null, measured: number | undefined) => {
    const error = expected !== null && measured !== undefined && expected > 0 ? `${(((measured - expected) / expected) * 100).toFixed(1)}%` : '—';
    rows.push([name, expected === null ? 'disk speed' : `${expected.toFixed(1)} ms`, measured === undefined ? '—' : `${measured.toFixed(1)} ms`, error]);
  };
  add('compute', implied.computeMs, a?.computeMs?.mean);
  add('prep stall', implied.prepStallMs, a?.prepStallMs?.mean);
  add('fetch stall', implied.fetchStallMs, a?.fetchStallMs?.mean);
  const header =
    `The emulated job was set to: compute ${settings.computeMs} ms/batch, prep ${settings.prepMs} ms/sample on ${settings.workers} workers, ` +
    `${settings.batchSize} samples of ${formatBytes(settings.meanFileBytes)} per batch` +
    (settings.storageBwBytesPerSec ? `, storage ${formatRate(settings.storageBwBytesPerSec)}.` : ', storage unthrottled.');
  return `${header}\n${table(rows, [1, 2, 3])}\n`;
}

/**
 * The what-if at no cache: the demo's dataset fits in this machine's memory,
 * so from epoch 2 on the page cache would serve every read; the question the
 * cold mode answers is what helps when it cannot (a dataset larger than memory).
 */
export function renderDemoWhatif(r: WhatifResult): string {
  const p = r.prediction;
  const lines = [
    `What would remove the stall if the page cache could not hold the dataset (the what-if model with no cache, as in the cold mode):`,
    `  predicted: ${p.samplesPerSec.toFixed(1)} samples/s, ${p.bottleneck}-bound (prep stall ${p.prepStallMs.toFixed(1)} ms, fetch stall ${p.fetchStallMs.toFixed(1)} ms per iteration)`,
    ...r.recommendations.map((rec) => `  - ${rec.text}`),
  ];
  return lines.join('\n') + '\n';
}

/** The commands to try next on the demo's own profile. */
export function renderNextSteps(profilePath: string): string {
  return [
    'Next, on this profile:',
    `  ds-analyzer whatif ${profilePath} --cache 50% --cpus 4   (half the dataset cached, 4 CPUs)`,
    `  ds-analyzer gate ${profilePath} --max-fetch-stall 20%   (a CI verdict; exit code 1 when a budget fails)`,
    `  ds-analyzer profile --data DIR -- python train.py DIR   (your own job)`,
  ].join('\n') + '\n';
}
