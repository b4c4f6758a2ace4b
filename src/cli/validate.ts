import { Command } from 'commander';
import { resolve } from 'node:path';
import { mkdirSync } from 'node:fs';
import { newestProfile, readProfile } from '../store/profile-store.js';
import { detectCgroups } from '../system/cgroups.js';
import { pageCacheSupport } from '../system/page-cache.js';
import { table } from '../report/format.js';
import { createValidateProgress, describePoint, formatDuration, renderPlan } from '../report/validate-progress.js';
import { runValidation, type ValidationPoint, type ValidationReport, type ValidationResult } from '../validate/run-validate.js';
import { planValidation } from '../validate/plan.js';
import { formatBytes, parseCacheSizeList, parseDurationSec, parseFraction, parsePositiveInt, resolveCacheSize } from '../units.js';
import { ExitCode, UserError } from '../errors.js';
import { combinedHalfWidth } from '../analysis/estimate.js';
import type { Profile } from '../schema/profile.js';
import { validateOutput } from '../schema/validate-output.js';
import { NEGLIGIBLE_FETCH_STALL } from '../whatif/model.js';
import { baseScenario, predict } from '../whatif/model.js';
import { cacheFor } from '../whatif/recommend.js';
import { requireModel } from './not-enough-data.js';
import { EXIT_CODES_HELP, type CommandFactory } from './program.js';
import { VALIDATE_FLAG_DEFAULTS as DEFAULTS } from '../profile/run-defaults.js';

/** Target of the what-if model: median absolute error of the predictions. */
const TARGET_MEDIAN_ERROR = 0.1;

export const validateCommand: CommandFactory = (io, result) =>
  new Command('validate')
    .description("run the profiled job again at other cache sizes and CPU counts and compare what it does with what whatif predicted")
    .argument('[profile]', 'profile to validate (default: the newest in profiles/)')
    .option('--cache <list>', "page-cache sizes to run at: bytes (8GiB), shares of the dataset (50%), 0, or 'recommended' (whatif's smallest LRU cache that removes the fetch stall), e.g. 0,25%,50%,recommended or 8MiB")
    .option('--cpus <list>', 'CPU counts to run at (affinity), e.g. 1,2')
    .option('--epochs <n>', 'epochs per cache point; the first (cold) one is not measured', DEFAULTS.epochs)
    .option('--precision <pct>', 'control and CPU points stop when the 95% CI of the iteration time is within this', DEFAULTS.precision)
    .option('--max-iterations <n>', 'iteration budget of control and CPU points', DEFAULTS.maxIterations)
    .option('--timeout <duration>', 'kill a point whose job runs longer than this', DEFAULTS.timeout)
    .option('--profiles-dir <dir>', 'folder searched for the newest profile', DEFAULTS.profilesDir)
    .option('--no-control', 'skip the control run (the profiled settings again, first)')
    .option('--json', 'print the comparison as JSON')
    .addHelpText(
      'after',
      `
Cache points hold the dataset's page cache at each size with a cap in user
space: each dataset file the job closes enters an LRU, and the least recently
closed files are evicted (posix_fadvise) while the LRU holds more than the
size. No root or cgroup is needed (only to throttle storage as the profile
did); the job's own memory does not move the cap. A point whose dataset
residency (mincore) left ±10% of the size over its measured window is marked
"not held" and left out of the error. CPU points restrict the job with an
affinity mask (taskset); one whose threads escaped it is "not held" too.
The job is the profile's own command and dataset. The plan, with each point's
estimated time, is printed before the first point starts.
A control run at the profiled settings comes first: how far it lands from the
profile is the job's own run-to-run variation on this machine, the floor under
any prediction's error.

Examples:
  $ ds-analyzer validate --cache 25%,50%,75% --cpus 1,2
  $ ds-analyzer validate --cache recommended      # is the fetch stall gone there?
  $ ds-analyzer validate profiles/train.json --cache 16GiB --epochs 3 --json
${EXIT_CODES_HELP}`,
    )
    .action(async (file: string | undefined, options: { cache?: string; cpus?: string; epochs: string; precision: string; maxIterations: string; timeout: string; profilesDir: string; control: boolean; json?: boolean }) => {
      const cacheSizes = options.cache === undefined ? [] : parseCacheSizeList(options.cache, '--cache', ['recommended'] as const);
      const path = file ? resolve(io.cwd, file) : newestProfile(resolve(io.cwd, options.profilesDir));
      const profile = readProfile(path);
      const cachePoints: ValidationPoint[] = cacheSizes.map((size) =>
        'word' in size
          ? { kind: 'cache', cacheBytes: recommendedCache(profile), recommended: true }
          : { kind: 'cache', cacheBytes: resolveCacheSize(size, profile.dataset.bytes) },
      );
      const cpuPoints: ValidationPoint[] = (options.cpus ?? '').split(',').filter(Boolean).map((text) => ({ kind: 'cpus', cpus: parsePositiveInt(text.trim(), '--cpus') }));
      if (cachePoints.length + cpuPoints.length === 0) throw new UserError('nothing to validate: pass --cache and/or --cpus', ExitCode.Usage);
      const cacheBlocked = cachePoints.length ? cachePointObstacle(profile, io.env) : null;
      const skipped = cacheBlocked ? cachePoints : [];
      if (skipped.length) io.stderr(`validate: cache points not run: ${cacheBlocked}\n`);
      if (skipped.length === cachePoints.length + cpuPoints.length) {
        throw new UserError(`nothing to validate here: ${cacheBlocked}; or pass --cpus`, ExitCode.Environment);
      }
      const control: ValidationPoint[] = options.control ? [{ kind: 'control' }] : [];
      const points = [...control, ...(cacheBlocked ? [] : cachePoints), ...cpuPoints];
      const epochs = parsePositiveInt(options.epochs, '--epochs');
      const maxIterations = parsePositiveInt(options.maxIterations, '--max-iterations');
      const model = requireModel(profile);
      const plan = planValidation(profile, model, points, {
        epochs,
        maxIterations,
        datasetFiles: profile.dataset.files,
        samplesPerIter: profile.modes.cached?.summary?.samplesPerIter ?? 1,
      });
      const progress = createValidateProgress(io.stderr, io.isTTY, plan);
      io.stderr(renderPlan(plan, epochs));
      const workDir = resolve(io.cwd, 'reports', `validate-${Date.now()}`);
      mkdirSync(workDir, { recursive: true });
      const report = await runValidation({
        profile,
        model,
        points,
        epochs,
        precision: parseFraction(options.precision, '--precision'),
        maxIterations,
        cwd: io.cwd,
        env: io.env,
        workDir,
        timeoutSec: parseDurationSec(options.timeout, '--timeout'),
        onPoint: (point, k) => progress.line(`validate: point ${k + 1}/${points.length}: ${describePoint(point)} (~${formatDuration(plan[k].estimatedSec)} planned)`),
        onProgress: (k, p) => progress.update(k, p),
        onPointDone: (r, k) => progress.line(`validate: point ${k + 1}/${points.length}: ${pointStatusLine(r)}`),
        onSignal: io.onSignal,
      });
      io.stdout(options.json ? JSON.stringify(validateOutput({ profile: path, ...report, notRun: skipped }), null, 1) + '\n' : renderValidation(report, path));
      if (!report.interrupted && report.results.length > 0 && report.results.every((r) => r.measuredSamplesPerSec === null)) {
        throw new UserError('no point was measured: the job failed at every point (the end of its log is in the report)', ExitCode.JobFailed);
      }
      if (report.interrupted) {
        const done = report.results.length;
        throw new UserError(
          done === 0 ? 'interrupted before any point completed' : `interrupted: ${done} of ${points.length} points completed; the report shows them`,
          ExitCode.Interrupted,
        );
      }
      result.exitCode = ExitCode.Ok;
    });

/** whatif's answer: the smallest LRU page cache that removes the fetch stall, in the steady state. */
function recommendedCache(profile: Profile): number {
  const model = requireModel(profile);
  const scenario = { ...baseScenario(model), epochs: null };
  const answer = cacheFor(model, scenario, predict(model, scenario), 'page-cache');
  if (answer.value === null) {
    throw new UserError("--cache recommended: no page-cache size removes this profile's fetch stall (see 'ds-analyzer whatif')", ExitCode.BadValue);
  }
  if (answer.value === 0) {
    throw new UserError("--cache recommended: this profile has no fetch stall to remove, so there is no cache to check; pass sizes instead", ExitCode.BadValue);
  }
  return answer.value;
}

const describe = describePoint;

/**
 * Why cache points cannot run here, or null: the cap needs per-file page-cache
 * control and trustworthy mincore readings; a profile whose cold mode
 * throttled storage needs the same throttle (a writable io/blkio cgroup).
 */
function cachePointObstacle(profile: Profile, env: NodeJS.ProcessEnv): string | null {
  const support = pageCacheSupport();
  if (!support.evict || !support.residency) return `the dataset's page cache cannot be capped and measured here (${support.reason})`;
  if (profile.options.storageBwBytesPerSec) {
    const io = detectCgroups({ v2Parent: env.DSA_CGROUP_PARENT }).controllers.io;
    if (!io.writable) return `the profile throttled storage (--storage-bw) and no writable io cgroup can do it again (${io.reason}); run as root, or re-profile without --storage-bw`;
  }
  return null;
}

/** One line when a point ends: its status, and for a cache point the residency it held. */
function pointStatusLine(r: ValidationResult): string {
  const what = describePoint(r.point);
  if (r.status === 'failed') return `${what}: failed (nothing measured)`;
  const cache = r.residency?.meanBytes != null ? `, dataset cached ${formatBytes(r.residency.meanBytes)} on average (target ${formatBytes(r.residency.targetBytes)} ± ${formatBytes(r.residency.toleranceBytes)})` : '';
  const cpus = r.affinity ? `, ${r.affinity.held ? 'affinity held' : `affinity did not apply (${r.affinity.example})`}` : '';
  return `${what}: ${r.status === 'measured' ? 'done' : 'NOT HELD: the asked setting was not tested'}${cache}${cpus}`;
}

/**
 * Whether the fetch stall is gone at the recommended cache: its measured rate
 * against the control's (everything cached, no fetch stall), within noise:
 * both runs' 95% half-widths and the run-to-run variation the control showed
 * against the profile, combined. A residue beyond noise but under 2% is what
 * the recommendation aims for (recommend.ts), so it counts as gone and says so.
 */
function recommendationCheck(report: ValidationReport): string {
  const point = report.results.find((r) => r.point.kind === 'cache' && r.point.recommended);
  const control = report.results.find((r) => r.point.kind === 'control');
  if (!point || point.point.kind !== 'cache' || point.measuredSamplesPerSec === null) return '';
  if (!control || control.measuredSamplesPerSec === null) return 'recommended cache: no control run to compare with (the fetch stall cannot be judged)\n';
  const gap = control.measuredSamplesPerSec - point.measuredSamplesPerSec;
  const runToRun = (report.controlAbsError ?? 0) * control.measuredSamplesPerSec;
  const noise = combinedHalfWidth(point.measuredHalfWidth ?? 0, control.measuredHalfWidth ?? 0, runToRun);
  const at = `at the recommended cache ${formatBytes(point.point.cacheBytes)}`;
  const rates = `${point.measuredSamplesPerSec.toFixed(1)} vs ${control.measuredSamplesPerSec.toFixed(1)} samples/s fully cached (control)`;
  const slower = gap / control.measuredSamplesPerSec;
  if (gap <= noise) {
    // Say how wide the noise was: a disturbed profile makes the run-to-run term, and so this judgement, loose.
    const width = `noise ±${noise.toFixed(1)} samples/s${runToRun > 0 ? `, of which run-to-run variation ${percent(report.controlAbsError)}` : ''}`;
    return `recommended cache: the fetch stall is gone within noise ${at}: ${rates} (${width})\n`;
  }
  if (slower <= NEGLIGIBLE_FETCH_STALL) {
    return `recommended cache: the fetch stall is gone ${at}: ${rates}, ${percent(slower)} slower, beyond noise but under the ${percent(NEGLIGIBLE_FETCH_STALL)} the model counts as no stall\n`;
  }
  // Hits as predicted (or more) yet slower: what the epoch-mean model leaves out is when the reads happen.
  const hitsHeld = point.measuredHitRatio !== null && point.predictedHitRatio !== null && point.measuredHitRatio >= point.predictedHitRatio - 0.02;
  const why = hitsHeld
    ? `; the cache hit as often as predicted (${point.measuredHitRatio!.toFixed(2)} vs ${point.predictedHitRatio!.toFixed(2)}), so what is left is how the misses fall in time, ` +
      'which the model takes as an epoch mean: under LRU the hits come early in each epoch and the misses late' +
      (report.overlapMeasured ? '' : ', and reads may run partly in series with pre-processing, which the profile did not measure (profile --overlap)')
    : '';
  return `recommended cache: the fetch stall is NOT gone ${at}: ${rates}, ${percent(slower)} slower beyond noise${why}\n`;
}

/** Why a point did not hold, with what it held instead. */
function notHeldWhy(r: ValidationResult): string {
  const v = r.residency;
  if (v) {
    if (v.meanBytes === null) return 'no residency reading fell in its measured window';
    const share = `${Math.round(v.inBandShare * 100)}% of ${v.readings} readings in the band`;
    const band = `${formatBytes(Math.max(0, v.targetBytes - v.toleranceBytes))}-${formatBytes(v.targetBytes + v.toleranceBytes)}`;
    const where = Math.abs(v.meanBytes - v.targetBytes) > v.toleranceBytes ? `outside the band ${band}` : `a mean inside the band ${band}, but most readings outside it`;
    return `the dataset's page cache held ${formatBytes(v.meanBytes)} on average (${formatBytes(v.minBytes!)}-${formatBytes(v.maxBytes!)}; ${share}), ${where}`;
  }
  if (r.affinity) return `the CPU affinity did not apply to the job: ${r.affinity.outside} of ${r.affinity.threads} threads outside CPUs ${r.affinity.cpus.join(',')}${r.affinity.example ? ` (${r.affinity.example})` : ''}`;
  return 'its setting did not hold';
}

function percent(error: number | null): string {
  return error === null ? '—' : `${(error * 100).toFixed(1)}%`;
}

/** Predicted against measured, point by point, and the verdict against the 10% target. */
export function renderValidation(report: ValidationReport, path: string): string {
  const rows = [['point', 'status', 'predicted samples/s', 'measured samples/s', 'error', 'anchored error', 'hit ratio pred/meas', 'run']];
  for (const r of report.results) {
    rows.push([
      describe(r.point),
      r.status === 'not-held' ? 'NOT HELD' : r.status,
      r.predictedSamplesPerSec.toFixed(1),
      r.measuredSamplesPerSec === null ? '—' : `${r.measuredSamplesPerSec.toFixed(1)}${r.measuredHalfWidth !== null ? ` ± ${r.measuredHalfWidth.toFixed(1)}` : ''}`,
      percent(r.relativeError),
      percent(r.anchoredError),
      r.predictedHitRatio === null ? '—' : `${r.predictedHitRatio.toFixed(2)}/${r.measuredHitRatio === null ? '?' : r.measuredHitRatio.toFixed(2)}`,
      r.note,
    ]);
  }
  const median = report.medianAbsError;
  const notHeld = report.results.filter((r) => r.point.kind !== 'control' && r.status === 'not-held');
  const untested = notHeld.length
    ? notHeld.map((r) => `${describe(r.point)}: NOT HELD, so this setting was not tested and its error is left out: ${notHeldWhy(r)}\n`).join('') +
      'the error of a point not held says nothing about the model; see docs/whatif.md ("How validate holds a cache size")\n'
    : '';
  const verdict =
    median === null
      ? notHeld.length
        ? 'no point tested its setting: nothing to say about the model'
        : 'no point measured: nothing to say about the model'
      : median <= TARGET_MEDIAN_ERROR
        ? `median absolute error ${(median * 100).toFixed(1)}%: within the ${TARGET_MEDIAN_ERROR * 100}% target`
        : `median absolute error ${(median * 100).toFixed(1)}%: NOT within the ${TARGET_MEDIAN_ERROR * 100}% target; trust the what-if less for this job`;
  const control =
    report.controlAbsError === null
      ? ''
      : `control: the profiled settings re-run landed ${percent(report.controlAbsError)} from the profile: the job's own ` +
        `run-to-run variation on this machine, which no model removes\n` +
        (report.anchoredMedianAbsError === null
          ? ''
          : `anchored to the control (compute and prep scaled by its pace, storage kept): median absolute error ${percent(report.anchoredMedianAbsError)}\n`);
  const caveats = report.modelCaveats.map((c) => `  - ${c}`).join('\n');
  const recommended = recommendationCheck(report);
  const failures = report.results
    .filter((r) => r.failureTail !== null)
    .map((r) => `${describe(r.point)} failed; the end of its log:\n${r.failureTail!.replace(/^/gm, '  | ')}\n`)
    .join('');
  return `validation of ${path}\n${table(rows, [2, 3, 4, 5, 6])}\n${untested}${verdict}\n${control}${recommended}${failures}${caveats ? `model caveats:\n${caveats}\n` : ''}`;
}
