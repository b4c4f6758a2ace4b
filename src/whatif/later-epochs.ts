/**
 * The epochs after the first (docs/method.md, "The first epoch and the rest"). The split and the verdict are of the
 * cold pace: the first epoch's, with every sample read from storage. Where the cache the job has (M0: the page cache's
 * budget on the profiled machine, or a remote job's own cache) holds the whole dataset, every later epoch reads from
 * memory at the cached mode's pace, which the profile measured. Where it does not, the what-if's steady state at M0
 * predicts them, and says which cache policy it assumed.
 */
import { combinedHalfWidth, liesAbove } from '../analysis/estimate.js';
import { fetchPlace } from '../schema/profile-source.js';
import { HIGH_STALL_THRESHOLD } from '../analysis/split.js';
import { STALL_THRESHOLD } from '../analysis/stall-calls.js';
import type { Estimate, LaterEpochs, Profile } from '../schema/profile.js';
import { formatBytes } from '../units.js';
import { profiledCacheBytes } from './fit/cache.js';
import { baseScenario, fitModel, predict } from './model.js';
import type { PageCacheModel } from './page-cache-curve.js';

/** The policy a prediction assumes, as the JSON and the text name it. */
const POLICY_TEXT: Record<PageCacheModel, string> = {
  'linux-two-list': "the kernel's two lists",
  'exact-lru': 'exact LRU',
};

/** A profile's later epochs; null without the split or cached and cold modes, or where the model cannot be fitted. */
export function laterEpochs(profile: Profile): LaterEpochs | null {
  const analysis = profile.analysis;
  const cached = profile.modes.cached;
  if (!analysis?.iterMs || !cached?.summary || !profile.modes.cold?.summary) return null;
  const m0 = profiledCacheBytes(profile);
  const holdsDataset = m0.bytes > 0 && profile.dataset.bytes <= m0.bytes;
  const cache = { cacheBytes: m0.bytes, cacheSource: m0.source, holdsDataset };
  const where = m0.jobCache ? "the job's own cache" : "this machine's page cache";
  const apart = stallsApart(analysis);
  if (holdsDataset) {
    // The real pace less the fetch stall: the cached mode's steady pace with the checkpoint and boundary stalls added
    // back, as the split adds them to the cold one; the cached mode proved it read nothing from storage. Its interval:
    // the cached mode's, with those of the stalls added back.
    const fetch = analysis.fetchStallMs?.mean ?? 0;
    const halfWidth = combinedHalfWidth(cached.summary.iterMs.halfWidth, ...apart.halfWidths);
    const iterMs: Estimate = { mean: analysis.iterMs.mean - fetch, halfWidth, proven: cached.state.proven };
    const prepStallMs = analysis.prepStallMs;
    // Profiles before stall calls: a stall whose 95% interval clears zero.
    const prepCalled = analysis.stallCalls
      ? analysis.stallCalls.prep === 'stall'
      : prepStallMs !== null && liesAbove(prepStallMs);
    const shares = sharesOf(iterMs.mean, prepCalled && prepStallMs ? prepStallMs.mean : 0, 0, apart);
    const bound = analysis.stallCalls?.prep === 'unknown' || !prepStallMs ? 'unknown' : boundOf(shares);
    return {
      ...cache,
      basis: 'measured',
      hitRatio: 1,
      iterMs,
      prepStallMs,
      fetchStallMs: { mean: 0, halfWidth: 0, proven: cached.state.proven },
      bound,
      text:
        `${boundText(bound, shares, profile)}, at the cached pace (${fmtEstimate(iterMs)} ms an iteration): ` +
        `the dataset (${formatBytes(profile.dataset.bytes)}) fits in ${where} (${formatBytes(m0.bytes)}), so ` +
        `they read nothing from ${fetchPlace(profile)}; ${firstEpochText(profile)}`,
    };
  }
  const fit = fitModel(profile);
  if (fit.kind !== 'fitted') return null;
  const p = predict(fit.model, baseScenario(fit.model));
  const proven = [profile.modes.synthetic, cached, profile.modes.cold].every((m) => m?.state.proven ?? false);
  const estimate = (ms: number): Estimate => ({ mean: ms, halfWidth: null, proven });
  // The model's steady pace, with the stalls measured apart added back (the same in every epoch).
  const iterMs = p.iterMs + apart.checkpointMs + apart.boundaryMs;
  const shares = sharesOf(iterMs, p.prepStallMs, p.fetchStallMs, apart);
  const bound = boundOf(shares);
  return {
    ...cache,
    basis: 'predicted',
    hitRatio: p.steadyHitRatio,
    policy: POLICY_TEXT[fit.model.pageCachePolicy.model],
    iterMs: estimate(iterMs),
    prepStallMs: estimate(p.prepStallMs),
    fetchStallMs: estimate(p.fetchStallMs),
    bound,
    text:
      `predicted ${boundText(bound, shares, profile)}, ${iterMs.toFixed(1)} ms an iteration: ` +
      `${where} (${formatBytes(m0.bytes)} for a ${formatBytes(profile.dataset.bytes)} dataset) ` +
      `serves ${(p.steadyHitRatio * 100).toFixed(0)}% of the reads in the steady state, simulated ` +
      `as ${POLICY_TEXT[fit.model.pageCachePolicy.model]} (${fit.model.pageCachePolicy.why}); ` +
      `the first epoch, nothing cached, is the verdict above; 'ds-analyzer whatif --cache SIZE' for other memory`,
  };
}

/**
 * The checkpoint and epoch-boundary stalls, the same in every epoch: their time, and the shares the verdict names
 * (those it calls stalls).
 */
interface StallsApart {
  checkpointMs: number;
  boundaryMs: number;
  /** Their intervals' half-widths, of those measured. */
  halfWidths: (number | null)[];
  checkpointCalled: boolean;
  boundaryCalled: boolean;
}

function stallsApart(analysis: NonNullable<Profile['analysis']>): StallsApart {
  const checkpoint = analysis.checkpointStall ?? null;
  const boundary = analysis.boundaryStall ?? null;
  return {
    checkpointMs: checkpoint?.ms.mean ?? 0,
    boundaryMs: boundary?.ms.mean ?? 0,
    halfWidths: [checkpoint?.ms.halfWidth ?? 0, boundary?.ms.halfWidth ?? 0],
    checkpointCalled: checkpoint?.call === 'stall',
    boundaryCalled: boundary?.call === 'stall',
  };
}

type Shares = Record<'prep' | 'fetch' | 'checkpoint' | 'boundary', number>;

function sharesOf(iterMs: number, prepMs: number, fetchMs: number, apart: StallsApart): Shares {
  const share = (ms: number): number => (iterMs > 0 ? ms / iterMs : 0);
  return {
    prep: share(prepMs),
    fetch: share(fetchMs),
    checkpoint: apart.checkpointCalled ? share(apart.checkpointMs) : 0,
    boundary: apart.boundaryCalled ? share(apart.boundaryMs) : 0,
  };
}

/**
 * Stalls of 10% of the iteration or more name the bound, the largest first (prep before fetch among equals), as the
 * verdict's rule does.
 */
function boundOf(shares: Shares): LaterEpochs['bound'] {
  const total = shares.prep + shares.fetch + shares.checkpoint + shares.boundary;
  if (total < STALL_THRESHOLD) return 'compute';
  const order = ['prep', 'fetch', 'checkpoint', 'boundary'] as const;
  return order.reduce((a, b) => (shares[b] > shares[a] ? b : a));
}

function boundText(bound: LaterEpochs['bound'], shares: Shares, profile: Profile): string {
  const severity = (share: number): string => (share >= HIGH_STALL_THRESHOLD ? 'highly' : 'moderately');
  const pct = (share: number): string => `${(share * 100).toFixed(0)}%`;
  switch (bound) {
    case 'prep':
      return `${severity(shares.prep)} prep-bound: ${pct(shares.prep)} of each iteration waits on CPU pre-processing`;
    case 'fetch':
      return (
        `${severity(shares.fetch)} fetch-bound: ${pct(shares.fetch)} of each iteration waits ` +
        `on ${fetchPlace(profile)}`
      );
    case 'checkpoint':
      return (
        `${severity(shares.checkpoint)} checkpoint-bound: ${pct(shares.checkpoint)} of each iteration is ` +
        `spent saving checkpoints`
      );
    case 'boundary':
      return (
        `${severity(shares.boundary)} boundary-bound: ${pct(shares.boundary)} of each iteration is lost at ` +
        `epoch starts`
      );
    case 'compute':
      return (
        `compute-bound: stalls ` +
        `take ${pct(shares.prep + shares.fetch + shares.checkpoint + shares.boundary)} of each iteration`
      );
    default:
      return 'bound by what the profile cannot tell (the prep stall is not measured)';
  }
}

/** The first epoch's fetch stall, stated apart. */
function firstEpochText(profile: Profile): string {
  const fetch = profile.analysis?.fetchStallMs ?? null;
  const place = fetchPlace(profile);
  if (!fetch) return `the first epoch reads the dataset from ${place}`;
  const calls = profile.analysis?.stallCalls;
  if (!(calls ? calls.fetch === 'stall' : liesAbove(fetch)))
    return `the first epoch, from ${place}, adds no fetch stall beyond noise (${fmtEstimate(fetch)} ms an iteration)`;
  return `the first epoch alone, from ${place}, adds a fetch stall of ${fmtEstimate(fetch)} ms an iteration`;
}

function fmtEstimate(e: Estimate): string {
  return e.halfWidth === null ? e.mean.toFixed(1) : `${e.mean.toFixed(1)} ± ${e.halfWidth.toFixed(1)}`;
}
