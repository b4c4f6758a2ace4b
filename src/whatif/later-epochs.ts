/**
 * The epochs after the first (docs/method.md, "The first epoch and the
 * rest"). The split and the verdict are of the cold pace: the first epoch's,
 * with every sample read from storage. Where the cache the job has (M0: the
 * page cache's budget on the profiled machine, or a remote job's own cache)
 * holds the whole dataset, every later epoch reads from memory at the cached
 * mode's pace, which the profile measured. Where it does not, the what-if's
 * steady state at M0 predicts them, and says which cache policy it assumed.
 */
import { fetchPlace } from '../analysis/fetch-place.js';
import { HIGH_STALL_THRESHOLD, STALL_THRESHOLD } from '../analysis/split.js';
import type { Estimate, LaterEpochs, Profile } from '../schema/profile.js';
import { formatBytes } from '../units.js';
import { profiledCacheBytes } from './fit/cache.js';
import { baseScenario, fitModel, predict } from './model.js';

/** The policy a prediction assumes, as the JSON and the text name it. */
const PREDICTED_POLICY = 'exact LRU';

/** The later epochs of a profile; null without the split or the cached and cold modes, or where the model cannot be fitted. */
export function laterEpochs(profile: Profile): LaterEpochs | null {
  const analysis = profile.analysis;
  const cached = profile.modes.cached;
  if (!analysis?.iterMs || !cached?.summary || !profile.modes.cold?.summary) return null;
  const m0 = profiledCacheBytes(profile);
  const holdsDataset = m0.bytes > 0 && profile.dataset.bytes <= m0.bytes;
  const cache = { cacheBytes: m0.bytes, cacheSource: m0.source, holdsDataset };
  if (holdsDataset) {
    // Read from memory alone: the cached mode proved that it read nothing from storage.
    const iterMs = { ...cached.summary.iterMs, proven: cached.state.proven };
    const prepStallMs = analysis.prepStallMs;
    // Profiles before stall calls: a stall whose 95% interval clears zero.
    const prepCalled = analysis.stallCalls ? analysis.stallCalls.prep === 'stall' : prepStallMs !== null && clearsZero(prepStallMs);
    const prepShare = prepCalled && prepStallMs ? prepStallMs.mean / iterMs.mean : 0;
    const bound = analysis.stallCalls?.prep === 'unknown' || !prepStallMs ? 'unknown' : boundOf(prepShare, 0);
    const where = m0.jobCache ? "the job's own cache" : "this machine's page cache";
    return {
      ...cache,
      basis: 'measured',
      hitRatio: 1,
      iterMs,
      prepStallMs,
      fetchStallMs: { mean: 0, halfWidth: 0, proven: cached.state.proven },
      bound,
      text:
        `${boundText(bound, prepShare, 0, profile)}, at the cached pace (${fmtEstimate(iterMs)} ms an iteration): ` +
        `the dataset (${formatBytes(profile.dataset.bytes)}) fits in ${where} (${formatBytes(m0.bytes)}), so they read nothing from ${fetchPlace(profile)}; ${firstEpochText(profile)}`,
    };
  }
  const fit = fitModel(profile);
  if (fit.kind !== 'fitted') return null;
  const p = predict(fit.model, baseScenario(fit.model));
  const proven = [profile.modes.synthetic, cached, profile.modes.cold].every((m) => m?.state.proven ?? false);
  const estimate = (ms: number): Estimate => ({ mean: ms, halfWidth: null, proven });
  const prepShare = p.prepStallMs / p.iterMs;
  const fetchShare = p.fetchStallMs / p.iterMs;
  const bound = boundOf(prepShare, fetchShare);
  const share = (p.steadyHitRatio * 100).toFixed(0);
  return {
    ...cache,
    basis: 'predicted',
    hitRatio: p.steadyHitRatio,
    policy: PREDICTED_POLICY,
    iterMs: estimate(p.iterMs),
    prepStallMs: estimate(p.prepStallMs),
    fetchStallMs: estimate(p.fetchStallMs),
    bound,
    text:
      `predicted ${boundText(bound, prepShare, fetchShare, profile)}, ${p.iterMs.toFixed(1)} ms an iteration: ` +
      `${m0.jobCache ? "the job's own cache" : "this machine's page cache"} (${formatBytes(m0.bytes)} for a ${formatBytes(profile.dataset.bytes)} dataset) ` +
      `serves ${share}% of the reads in the steady state, modelled as ${PREDICTED_POLICY} (the kernel's page cache may keep more); ` +
      `the first epoch, nothing cached, is the verdict above; 'ds-analyzer whatif --cache SIZE' for other memory`,
  };
}

/** Stalls of 10% of the iteration or more name the bound, the largest first, as the verdict's rule does. */
function boundOf(prepShare: number, fetchShare: number): LaterEpochs['bound'] {
  if (prepShare + fetchShare < STALL_THRESHOLD) return 'compute';
  return fetchShare > prepShare ? 'fetch' : 'prep';
}

function boundText(bound: LaterEpochs['bound'], prepShare: number, fetchShare: number, profile: Profile): string {
  const severity = (share: number): string => (share >= HIGH_STALL_THRESHOLD ? 'highly' : 'moderately');
  const pct = (share: number): string => `${(share * 100).toFixed(0)}%`;
  if (bound === 'prep') return `${severity(prepShare)} prep-bound: ${pct(prepShare)} of each iteration waits on CPU pre-processing`;
  if (bound === 'fetch') return `${severity(fetchShare)} fetch-bound: ${pct(fetchShare)} of each iteration waits on ${fetchPlace(profile)}`;
  if (bound === 'compute') return `compute-bound: data stalls take ${pct(prepShare + fetchShare)} of each iteration`;
  return 'bound by what the profile cannot tell (the prep stall is not measured)';
}

/** The first epoch's fetch stall, stated apart. */
function firstEpochText(profile: Profile): string {
  const fetch = profile.analysis?.fetchStallMs ?? null;
  const place = fetchPlace(profile);
  if (!fetch) return `the first epoch reads the dataset from ${place}`;
  const calls = profile.analysis?.stallCalls;
  if (!(calls ? calls.fetch === 'stall' : clearsZero(fetch))) return `the first epoch, from ${place}, adds no fetch stall beyond noise (${fmtEstimate(fetch)} ms an iteration)`;
  return `the first epoch alone, from ${place}, adds a fetch stall of ${fmtEstimate(fetch)} ms an iteration`;
}

/** A stall's call in a profile from before stall calls: its 95% interval clears zero. */
function clearsZero(e: Estimate): boolean {
  return e.mean - (e.halfWidth ?? 0) > 0;
}

function fmtEstimate(e: Estimate): string {
  return e.halfWidth === null ? e.mean.toFixed(1) : `${e.mean.toFixed(1)} ± ${e.halfWidth.toFixed(1)}`;
}
