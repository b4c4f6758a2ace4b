// validate's plan (each point's estimated time, before anything runs) and its progress while a point runs: one
// rewritten line on a TTY, a plain line every few seconds otherwise.
import { formatBytes } from '../units.js';
import { createProgress, liveLine } from './progress.js';
import type { PlannedPoint } from '../validate/plan.js';
import { describePoint, pointKind } from '../validate/point-kinds.js';
import type { ValidationResult } from '../validate/results.js';
import type { PointProgress, ValidateHooks } from '../validate/run-validate.js';

/** Seconds as 45s, 3m10s, 1h05m. */
function formatDuration(sec: number): string {
  const s = Math.max(0, Math.round(sec));
  if (s < 60) return `${s}s`;
  if (s < 3600) return `${Math.floor(s / 60)}m${String(s % 60).padStart(2, '0')}s`;
  return `${Math.floor(s / 3600)}h${String(Math.floor((s % 3600) / 60)).padStart(2, '0')}m`;
}

/** The plan, one line per point, and the total. */
function renderPlan(plan: readonly PlannedPoint[], epochs: number): string {
  const total = plan.reduce((sum, p) => sum + p.estimatedSec, 0);
  const most = plan.reduce((sum, p) => sum + p.maxSec, 0);
  const lines = plan.map((p, k) => {
    const what =
      pointKind(p.point).runs === 'epochs'
        ? `${epochs} epochs, ${p.iterations} iterations (the first epoch fills the cache)`
        : `about ${p.iterations} iterations (until the 95% CI is tight)`;
    return (
      `  ${k + 1}. ${describePoint(p.point).padEnd(32)} ~${formatDuration(p.estimatedSec).padStart(6)} (at ` +
      `most ${formatDuration(p.maxSec)})  ${what}`
    );
  });
  return `validate plan (estimated from the profile's rates; about ${formatDuration(total)} in all, at most ${formatDuration(most)} if no point reaches its precision early):\n${lines.join('\n')}\n`;
}

/**
 * A point's progress line: its iterations against the plan's (past them, its precision not reached: against its
 * budget, not "nothing left"), the cache it holds, the time spent and left.
 */
function describeProgress(plan: readonly PlannedPoint[], index: number, p: PointProgress): string {
  const planned = plan[index];
  const past = planned !== undefined && p.iterations > planned.iterations;
  const goal = planned ? (past ? planned.maxIterations : planned.iterations) : null;
  const share = goal !== null && goal > 0 ? Math.min(1, p.iterations / goal) : null;
  const left =
    share !== null && share > 0.05
      ? `, ${past ? 'at most ' : ''}~${formatDuration((p.elapsedSec / share) * (1 - share))} left`
      : '';
  const cached = p.residentBytes !== null ? `, dataset cached ${formatBytes(p.residentBytes)}` : '';
  return `point ${index + 1}/${plan.length}:${epochText(p)} ${iterationsText(p.iterations, planned, past)}${cached}, ${formatDuration(p.elapsedSec)}${left}`;
}

/** A cache point's epoch: of those planned, or past them. */
function epochText(p: PointProgress): string {
  if (p.epoch === null) return '';
  if (p.epochs !== null && p.epoch > p.epochs) return ` epoch ${p.epoch} (${p.epochs} planned)`;
  return ` epoch ${p.epoch}/${p.epochs}${p.epoch === 1 ? ' (filling, not measured)' : ''}`;
}

/** The iterations run, against the plan's, or against the budget once past them. */
function iterationsText(iterations: number, planned: PlannedPoint | undefined, past: boolean): string {
  if (!planned) return `iter ${iterations}`;
  if (!past) return `iter ${iterations}/${planned.iterations}`;
  return `iter ${iterations} of at most ${planned.maxIterations} (past the planned ${planned.iterations}: its 95% CI not yet tight)`;
}

/** One line when a point ends: its status, and for a cache point the residency it held. */
function pointStatusLine(r: ValidationResult): string {
  const what = describePoint(r.point);
  if (r.status === 'failed') return `${what}: failed (nothing measured)`;
  const cache =
    r.residency?.meanBytes != null
      ? `, dataset cached ${formatBytes(r.residency.meanBytes)} on average ` +
        `(target ${formatBytes(r.residency.targetBytes)} ± ${formatBytes(r.residency.toleranceBytes)})`
      : '';
  const cpus = r.affinity
    ? `, ${r.affinity.held ? 'affinity held' : `affinity did not apply (${r.affinity.example})`}`
    : '';
  return `${what}: ${r.status === 'measured' ? 'done' : 'NOT HELD: the asked setting was not tested'}${cache}${cpus}`;
}

/**
 * validate's hooks that tell the user what happens, on `write` (stderr): the cache points left out, the plan, and each
 * point as it starts, runs and ends.
 */
export function validateProgressHooks(
  write: (text: string) => void,
  isTTY: boolean,
  epochs: number,
): Omit<ValidateHooks, 'onSignal'> {
  let plan: readonly PlannedPoint[] = [];
  const progress = liveLine(write, isTTY, 10_000);
  const tag = (index: number) => `validate: point ${index + 1}/${plan.length}`;
  // A point run cached on remote data fetches its local copy first: said as profile says it.
  const downloads = createProgress(write, isTTY);
  return {
    onDownload: (p) => downloads.download(p),
    onCachePointsSkipped: (reason) => write(`validate: cache points not run: ${reason}\n`),
    onWarning: (message) => write(`validate: ${message}\n`),
    onNote: (message) => write(`validate: note: ${message}\n`),
    onPlan: (planned) => {
      plan = planned;
      write(renderPlan(plan, epochs));
    },
    onPoint: (point, index) =>
      progress.line(`${tag(index)}: ${describePoint(point)} (~${formatDuration(plan[index].estimatedSec)} planned)`),
    onProgress: (index, p) => progress.show(describeProgress(plan, index, p)),
    onPointDone: (result, index) => progress.line(`${tag(index)}: ${pointStatusLine(result)}`),
  };
}
