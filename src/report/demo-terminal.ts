/**
 * What `ds-analyzer demo` prints after the profile summary: the measured split next to the emulator's settings, the
 * what-if at no cache, and what to try next.
 */
import type { DemoHooks, DemoOutcome } from '../demo/run-demo.js';
import { impliedSplit, type EmulatorSettings } from '../emulator/expected.js';
import { failedBeforeAnyIteration } from '../profile/run-outcome.js';
import type { Profile } from '../schema/profile.js';
import { formatBytes, formatRate } from '../units.js';
import { isNotEnoughData } from '../whatif/model.js';
import type { WhatifResult } from '../whatif/whatif.js';
import { table } from './format.js';
import { reportNotes, type WrittenReport } from './write-report.js';

/** What the demo's summary shows: the demo's run, and the report written of it (null: none). */
export interface DemoSummary extends DemoOutcome {
  /** The report written; null with --no-report, or when the job did not end well. */
  report: WrittenReport | null;
}

/** The demo's own progress lines (the dataset, the throttle), on `write` (stderr). */
export function demoProgressHooks(
  write: (text: string) => void,
): Pick<DemoHooks, 'onDatasetStart' | 'onDatasetReady' | 'onThrottle'> {
  const say = (text: string) => write(`${text}\n`);
  return {
    onDatasetStart: (preset, dir) =>
      say(`demo: dataset of ${preset.files} files of ${formatBytes(preset.fileBytes)} in ${dir}`),
    onDatasetReady: (dataset) =>
      say(dataset.reused ? 'demo: reusing the generated dataset' : `demo: generated ${formatBytes(dataset.bytes)}`),
    onThrottle: (reason, bytesPerSec) =>
      say(
        reason
          ? `demo: storage is not throttled (${reason}); the cold mode reads at the disk's own speed`
          : `demo: cold storage throttled to ${formatRate(bytesPerSec)}`,
      ),
  };
}

/**
 * What the demo prints after the profile's own summary: the settings check (unless nothing was measured: the failure is
 * then all there is to say), and, when the job ended well, the what-if, the report and what to try next.
 * `shown` writes a path as the user should see it.
 */
export function renderDemoOutcome(outcome: DemoSummary, shown: (path: string) => string): string {
  const parts: string[] = [];
  if (!failedBeforeAnyIteration(outcome.run)) parts.push(renderSettingsCheck(outcome.run.profile, outcome.settings));
  if (outcome.whatif !== null) {
    parts.push(
      isNotEnoughData(outcome.whatif)
        ? `what-if: not available for this profile: ${outcome.whatif.reason}\n`
        : renderDemoWhatif(outcome.whatif),
    );
    const written = outcome.report;
    if (written) {
      parts.push(
        `report: ${shown(written.html)} (self-contained) ` +
          `and ${shown(written.markdown)} with ${written.pngs.length} PNG charts\n`,
      );
      for (const note of reportNotes(written)) parts.push(`report ${note}\n`);
    }
    parts.push(renderNextSteps(shown(outcome.run.path)));
  }
  return parts.map((part) => `\n${part}`).join('');
}

/** Measured split next to what the emulator's settings imply: the demo checks itself. */
function renderSettingsCheck(profile: Profile, settings: EmulatorSettings): string {
  const implied = impliedSplit(settings);
  const a = profile.analysis;
  const rows = [['per iteration', 'set by the emulator', 'measured', 'error']];
  const add = (name: string, expected: number | null, measured: number | undefined) => {
    const error =
      expected !== null && measured !== undefined && expected > 0
        ? `${(((measured - expected) / expected) * 100).toFixed(1)}%`
        : '—';
    rows.push([
      name,
      expected === null ? 'disk speed' : `${expected.toFixed(1)} ms`,
      measured === undefined ? '—' : `${measured.toFixed(1)} ms`,
      error,
    ]);
  };
  add('compute', implied.computeMs, a?.computeMs?.mean);
  add('prep stall', implied.prepStallMs, a?.prepStallMs?.mean);
  add('fetch stall', implied.fetchStallMs, a?.fetchStallMs?.mean);
  const header =
    `The emulated job was set to: compute ${settings.computeMs} ms/batch, prep ${settings.prepMs} ms/sample ` +
    `on ${settings.workers} workers, ` +
    `${settings.batchSize} samples of ${formatBytes(settings.meanFileBytes)} per batch` +
    (settings.storageBwBytesPerSec
      ? `, storage ${formatRate(settings.storageBwBytesPerSec)}.`
      : ', storage unthrottled.');
  return `${header}\n${table(rows, [1, 2, 3])}\n`;
}

/**
 * The what-if at no cache: the demo's dataset fits in this machine's memory, so from epoch 2 on the page cache would
 * serve every read; the question the cold mode answers is what helps when it cannot (a dataset larger than memory).
 */
function renderDemoWhatif(r: WhatifResult): string {
  const p = r.prediction;
  const lines = [
    `What would remove the stall if the page cache could not hold the dataset (the what-if model with no cache, ` +
      `as in the cold mode):`,
    `  predicted: ${p.samplesPerSec.toFixed(1)} samples/s, ${p.bottleneck}-bound (prep ` +
      `stall ${p.prepStallMs.toFixed(1)} ms, fetch stall ${p.fetchStallMs.toFixed(1)} ms per iteration)`,
    ...r.recommendations.map((rec) => `  - ${rec.text}`),
  ];
  return lines.join('\n') + '\n';
}

/** The commands to try next on the demo's own profile. */
function renderNextSteps(profilePath: string): string {
  return (
    [
      'Next, on this profile:',
      `  ds-analyzer whatif ${profilePath} --cache 50% --cpus 4   (half the dataset cached, 4 CPUs)`,
      `  ds-analyzer gate ${profilePath} --max-fetch-stall 20%   (a CI verdict; exit code 1 when a budget fails)`,
      `  ds-analyzer profile --data DIR -- python train.py DIR   (your own job)`,
    ].join('\n') + '\n'
  );
}
