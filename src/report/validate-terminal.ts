// What `ds-analyzer validate` prints when it is done: predicted against measured, point by point, the points not held,
// the model's verdict against its target, the control, the recommended cache's check, the failures and the model's
// caveats; and the message of a run that did not end well.
import { formatBytes } from '../units.js';
import { errorSplit, type CheckpointCheck, type ValidationReport, type ValidationResult } from '../validate/results.js';
import { WRITE_STALL_ITERATION_FLOOR, WRITE_STALL_TOLERANCE } from '../validate/write-point.js';
import {
  modelVerdict,
  notHeldPoints,
  recommendationVerdict,
  type ModelVerdict,
  type RecommendationVerdict,
  type ValidationFailure,
} from '../validate/verdict.js';
import { table } from './format.js';
import { describePoint } from '../validate/point-kinds.js';

function percent(error: number | null): string {
  return error === null ? '—' : `${(error * 100).toFixed(1)}%`;
}

function signed(error: number): string {
  return `${error >= 0 ? '+' : '−'}${Math.abs(error * 100).toFixed(1)}%`;
}

/** Predicted against measured, point by point, and the verdict against the 10% target. */
export function renderValidation(report: ValidationReport, path: string): string {
  const caveats = report.modelCaveats.map((c) => `  - ${c}`).join('\n');
  const splits = splitLines(report);
  return (
    `validation of ${path}\n${pointsTable(report)}\n${untestedLines(report)}` +
    (splits ? `the cache points' error, by where it comes from:\n${splits}` : '') +
    firstBatchLines(report) +
    report.results
      .filter((r) => r.checkpoint !== undefined)
      .map((r) => renderCheckpointCheck(describePoint(r.point), r.checkpoint!))
      .join('') +
    `${renderModelVerdict(modelVerdict(report))}\n${controlLines(report)}` +
    renderRecommendation(recommendationVerdict(report)) +
    report.results
      .filter((r) => r.failureTail !== null)
      .map((r) => `${describePoint(r.point)} failed; the end of its log:\n${r.failureTail!.replace(/^/gm, '  | ')}\n`)
      .join('') +
    (caveats ? `model caveats:\n${caveats}\n` : '')
  );
}

function pointsTable(report: ValidationReport): string {
  const rows = [
    [
      'point',
      'status',
      'predicted samples/s',
      'measured samples/s',
      'error',
      'anchored error',
      'hit ratio pred/meas',
      'run',
    ],
  ];
  for (const r of report.results) {
    rows.push([
      describePoint(r.point),
      r.status === 'not-held' ? 'NOT HELD' : r.status,
      r.predictedSamplesPerSec.toFixed(1),
      r.measuredSamplesPerSec === null
        ? '—'
        : `${r.measuredSamplesPerSec.toFixed(1)}${r.measuredHalfWidth !== null ? ` ± ${r.measuredHalfWidth.toFixed(1)}` : ''}`,
      percent(r.relativeError),
      percent(r.anchoredError),
      r.predictedHitRatio === null
        ? '—'
        : `${r.predictedHitRatio.toFixed(2)}/${r.measuredHitRatio === null ? '?' : r.measuredHitRatio.toFixed(2)}`,
      r.note,
    ]);
  }
  return table(rows, [2, 3, 4, 5, 6]);
}

/** The points whose setting did not hold, left out of the error, and why. */
function untestedLines(report: ValidationReport): string {
  const notHeld = notHeldPoints(report);
  if (!notHeld.length) return '';
  return (
    notHeld
      .map(
        (r) =>
          `${describePoint(r.point)}: NOT HELD, so this setting was not tested and its error is left ` +
          `out: ${notHeldWhy(r)}\n`,
      )
      .join('') +
    'the error of a point not held says nothing about the model; see docs/whatif.md ("How validate holds a ' +
    'cache size")\n'
  );
}

/** The control run: the job's own variation, and the error of the model anchored to it. */
function controlLines(report: ValidationReport): string {
  if (report.controlAbsError === null) return '';
  return (
    `control: the profiled settings re-run landed ${percent(report.controlAbsError)} from the profile: the ` +
    `job's own ` +
    `run-to-run variation on this machine, which no model removes\n` +
    (report.anchoredMedianAbsError === null
      ? ''
      : `anchored to the control (compute and prep scaled by its pace, storage kept): median absolute ` +
        `error ${percent(report.anchoredMedianAbsError)}\n`)
  );
}

/** Cold points: the job's first batch against the model's. */
function firstBatchLines(report: ValidationReport): string {
  return report.results
    .filter((r) => r.firstBatchSec !== undefined)
    .map((r) => {
      const f = r.firstBatchSec!;
      return (
        `${describePoint(r.point)}: first batch ${f.measured.toFixed(2)} s after the job started, ` +
        `predicted ${f.predicted.toFixed(2)} s (${percent((f.predicted - f.measured) / f.measured)})\n`
      );
    })
    .join('');
}

/** Each cache point's error split into the hit ratio's part and the rest of the model's. */
function splitLines(report: ValidationReport): string {
  return report.results
    .map((r) => ({ r, split: errorSplit(r) }))
    .filter((s) => s.split !== null)
    .map(
      ({ r, split }) =>
        `  ${describePoint(r.point)}: ${percent(r.relativeError)} = ${signed(split!.policy)} from the hit ratio ` +
        `(${r.predictedHitRatio!.toFixed(2)} predicted, ${r.measuredHitRatio!.toFixed(2)} measured) ${signed(split!.rest)} from the rest of the model (its pace at the measured hit ratio)\n`,
    )
    .join('');
}

/**
 * A write point's checkpoint stall and iteration time against whatif --write-bw, with the disks held and what the
 * throttle could not hold.
 */
function renderCheckpointCheck(what: string, c: CheckpointCheck): string {
  const error = (predicted: number, measured: number | null): string =>
    measured ? percent((predicted - measured) / measured) : '—';
  const stall =
    c.measuredStallMsPerIter === null
      ? `no save in the run, predicted ${c.predictedStallMsPerIter.toFixed(1)} ms per iteration`
      : `${c.measuredStallMsPerIter.toFixed(1)} ms per iteration, ` +
        `predicted ${c.predictedStallMsPerIter.toFixed(1)} (${error(c.predictedStallMsPerIter, c.measuredStallMsPerIter)}): ` +
        (c.stallWithinTolerance ? 'within' : 'NOT within') +
        ` ${WRITE_STALL_TOLERANCE * 100}% (or ${WRITE_STALL_ITERATION_FLOOR * 100}% of the iteration)`;
  const iteration =
    c.measuredIterMs === null
      ? ''
      : `; iteration ${c.measuredIterMs.toFixed(1)} ms, ` +
        `predicted ${c.predictedIterMs.toFixed(1)} (${error(c.predictedIterMs, c.measuredIterMs)})`;
  return (
    `${what}: checkpoint stall ${stall}${iteration}; ${c.synced ? 'synced' : 'buffered'} saves; disks held (cgroup ${c.cgroup}): ${c.devices.join(', ')}\n` +
    (c.caveat ? `  note: ${c.caveat}\n` : '')
  );
}

/** The model's error against its target, in one line (no newline). */
function renderModelVerdict(verdict: ModelVerdict): string {
  switch (verdict.kind) {
    case 'untested':
      return 'no point tested its setting: nothing to say about the model';
    case 'unmeasured':
      return 'no point measured: nothing to say about the model';
    case 'within-target':
    case 'beyond-target': {
      const within = verdict.kind === 'within-target';
      return (
        `median absolute error ${percent(verdict.medianAbsError)}: ${within ? 'within' : 'NOT within'} the ` +
        `${verdict.targetAbsError * 100}% target${within ? '' : '; trust the what-if less for this job'}`
      );
    }
  }
}

/** Whether the fetch stall is gone at the recommended cache, in a line; '' when no recommended point was measured. */
function renderRecommendation(verdict: RecommendationVerdict | null): string {
  if (verdict === null) return '';
  if (verdict.kind === 'no-control')
    return 'recommended cache: no control run to compare with (the fetch stall cannot be judged)\n';
  const at = `at the recommended cache ${formatBytes(verdict.cacheBytes)}`;
  const rates =
    `${verdict.samplesPerSec.toFixed(1)} vs ${verdict.controlSamplesPerSec.toFixed(1)} samples/s ` +
    `fully cached (control)`;
  switch (verdict.kind) {
    case 'gone-within-noise': {
      // Say how wide the noise was: a disturbed profile makes the run-to-run term, and so this judgement, loose.
      const width = `noise ±${verdict.noiseSamplesPerSec.toFixed(1)} samples/s${verdict.runToRunShare !== null ? `, of which run-to-run variation ${percent(verdict.runToRunShare)}` : ''}`;
      return `recommended cache: the fetch stall is gone within noise ${at}: ${rates} (${width})\n`;
    }
    case 'gone-negligible':
      return (
        `recommended cache: the fetch stall is ` +
        `gone ${at}: ${rates}, ${percent(verdict.slowerShare)} slower, beyond noise but under ` +
        `the ${percent(verdict.negligibleShare)} the model counts as no stall\n`
      );
    case 'not-gone': {
      const hits = verdict.heldHitRatios;
      const why = hits
        ? `; the cache hit as often as predicted (${hits.measured.toFixed(2)} vs ${hits.predicted.toFixed(2)}), ` +
          `so what is left is how the misses fall in time, ` +
          'which the model takes as an epoch mean: under LRU the hits come early in each epoch and the misses late' +
          (verdict.overlapMeasured
            ? ''
            : ', and reads may run partly in series with pre-processing, which the profile did not measure ' +
              '(profile --overlap)')
        : '';
      return (
        `recommended cache: the fetch stall is NOT ` +
        `gone ${at}: ${rates}, ${percent(verdict.slowerShare)} slower beyond noise${why}\n`
      );
    }
  }
}

/** Why a point did not hold, with what it held instead. */
function notHeldWhy(r: ValidationResult): string {
  const v = r.residency;
  if (v) {
    if (v.meanBytes === null) return 'no residency reading fell in its measured window';
    const share = `${Math.round(v.inBandShare * 100)}% of ${v.readings} readings in the band`;
    const band = `${formatBytes(Math.max(0, v.targetBytes - v.toleranceBytes))}-${formatBytes(v.targetBytes + v.toleranceBytes)}`;
    const where =
      Math.abs(v.meanBytes - v.targetBytes) > v.toleranceBytes
        ? `outside the band ${band}`
        : `a mean inside the band ${band}, but most readings outside it`;
    return (
      `the dataset's page cache held ${formatBytes(v.meanBytes)} on average ` +
      `(${formatBytes(v.minBytes!)}-${formatBytes(v.maxBytes!)}; ${share}), ${where}`
    );
  }
  if (r.affinity)
    return `the CPU affinity did not apply to the job: ${r.affinity.outside} of ${r.affinity.threads} threads outside CPUs ${r.affinity.cpus.join(',')}${r.affinity.example ? ` (${r.affinity.example})` : ''}`;
  return 'its setting did not hold';
}

/** The one-line message of a run that did not end well. */
export function renderValidationFailure(failure: ValidationFailure): string {
  if (failure.kind === 'job-failed')
    return 'no point was measured: the job failed at every point (the end of its log is in the report)';
  return failure.completed === 0
    ? 'interrupted before any point completed'
    : `interrupted: ${failure.completed} of ${failure.planned} points completed; the report shows them`;
}
