import type { Iteration, ResourceSample } from '../schema/profile.js';

/** A reading taken at a time: a resource sample, a fetch counter's reading. */
type Timed = { t: number };

/** An iteration's time span, ms since the epoch: from its request for the batch to its compute's end. */
export function iterationBounds(it: Iteration): { startMs: number; endMs: number } {
  return { startMs: it.t - it.waitMs, endMs: it.t + it.computeMs };
}

/** Time span of a run of iterations: from the first request to the last batch's compute end. */
function iterationSpan(iterations: Iteration[]): { startMs: number; endMs: number } | null {
  if (iterations.length === 0) return null;
  return { startMs: iterationBounds(iterations[0]).startMs, endMs: iterationBounds(iterations.at(-1)!).endMs };
}

/** The span of the measured iterations when the resource samples cover it (to a sampling period or so), else null. */
function coveredSpan(samples: readonly Timed[], measured: Iteration[]): { startMs: number; endMs: number } | null {
  const span = iterationSpan(measured);
  if (!span || samples.length < 2) return null;
  const covered = samples[0].t <= span.startMs + 1000 && samples[samples.length - 1].t >= span.endMs - 1000;
  return covered ? span : null;
}

/** The data's cumulative fetched bytes at each sample: the source's own meter where it has one, else read_bytes. */
export function fetchedSeriesOf(resources: readonly ResourceSample[]): { t: number; bytes: number }[] {
  return resources.map((s) => ({ t: s.t, bytes: s.fetchedBytes ?? s.jobReadBytes }));
}

/** Linear interpolation of a cumulative counter of the samples at time t (clamped to the ends). */
export function counterAt<S extends Timed>(samples: readonly S[], t: number, pick: (s: S) => number): number | null {
  if (samples.length === 0) return null;
  if (t <= samples[0].t) return pick(samples[0]);
  for (let k = 1; k < samples.length; k++) {
    const b = samples[k];
    if (t <= b.t) {
      const a = samples[k - 1];
      const w = b.t === a.t ? 1 : (t - a.t) / (b.t - a.t);
      return pick(a) + w * (pick(b) - pick(a));
    }
  }
  return pick(samples[samples.length - 1]);
}

/** A cumulative counter's rate over the measured iterations, per second and per sample; null when not covered. */
export function windowRates<S extends Timed>(
  samples: readonly S[],
  measured: Iteration[],
  pick: (s: S) => number,
): { perSec: number; perSample: number } | null {
  const span = coveredSpan(samples, measured);
  if (!span) return null;
  const start = counterAt(samples, span.startMs, pick)!;
  const end = counterAt(samples, span.endMs, pick)!;
  const seconds = (span.endMs - span.startMs) / 1000;
  const sampleCount = measured.reduce((sum, it) => sum + it.samples, 0);
  if (seconds <= 0 || sampleCount === 0) return null;
  const delta = Math.max(0, end - start);
  return { perSec: delta / seconds, perSample: delta / sampleCount };
}

/** Bytes read against bytes consumed over a window: what a block's storage or network proof stands on. */
export interface ReadProof {
  readBytes: number;
  /** Bytes answered from a local copy (remote data's cached mode), where counted. */
  localBytes?: number;
  consumedBytes: number;
  consumedSamples: number;
  /** Bytes left out: read while the training loader was idle between epochs. */
  asideBytes?: number;
}

/**
 * Bytes fetched (a data source's meter: read_bytes of the job's tree for local files) during the measured window,
 * against the bytes of samples the job consumed in that window (all ranks). Null when the meter's readings do not cover
 * the window. The window excludes start-up, so a short run's imports and model loading do not pass for dataset reads.
 */
export function windowReadProof(
  series: readonly { t: number; bytes: number; localBytes?: number }[],
  measured: Iteration[],
  allIterations: Iteration[],
  meanFileBytes: number,
  aside: readonly TimeSpan[] = [],
): ReadProof | null {
  const span = coveredSpan(series, measured);
  if (!span) return null;
  const riseOver = (from: number, to: number, pick: (s: (typeof series)[number]) => number) =>
    Math.max(0, counterAt(series, to, pick)! - counterAt(series, from, pick)!);
  const rise = (pick: (s: (typeof series)[number]) => number) => riseOver(span.startMs, span.endMs, pick);
  // Reads while the training loader was idle (validation, saves and their copies between epochs) are not its data's.
  const clipped = aside.flatMap((a) => {
    const [from, to] = [Math.max(a.startMs, span.startMs), Math.min(a.endMs, span.endMs)];
    return to > from ? [riseOver(from, to, (s) => s.bytes)] : [];
  });
  const asideBytes = Math.min(
    rise((s) => s.bytes),
    clipped.reduce((sum, b) => sum + b, 0),
  );
  const readBytes = rise((s) => s.bytes) - asideBytes;
  // Bytes the job's hook answered from the local copy (remote data's cached mode), where the series counts them.
  const local = series.some((s) => s.localBytes !== undefined) ? { localBytes: rise((s) => s.localBytes ?? 0) } : {};
  let consumedBytes = 0;
  let consumedSamples = 0;
  for (const it of allIterations) {
    if (it.t < span.startMs || it.t > span.endMs) continue;
    consumedBytes += it.bytes ?? it.samples * meanFileBytes;
    consumedSamples += it.samples;
  }
  if (consumedBytes <= 0) return null;
  return { readBytes, ...local, consumedBytes, consumedSamples, ...(asideBytes > 0 ? { asideBytes } : {}) };
}

/** A span of wall-clock time, ms since the epoch. */
export interface TimeSpan {
  startMs: number;
  endMs: number;
}

/**
 * The spans in which no rank's training loader was iterating between two of its epochs (the epoch events' gapMs: from
 * one epoch's StopIteration to iter(loader) for the next), where every rank was idle at once: the validation pass, the
 * checkpoint saved and copied, the script's own work. A rank's epoch event is written as its first batch returns, so
 * its gap ends createMs + firstWaitMs before it.
 */
export function idleLoaderSpans(ranks: readonly { epochs?: readonly EpochGap[] }[]): TimeSpan[] {
  const perRank = ranks.map((r) =>
    (r.epochs ?? []).flatMap((e) => {
      if (e.gapMs === undefined) return [];
      const endMs = e.t - e.firstWaitMs - e.createMs;
      return [{ startMs: endMs - e.gapMs, endMs }];
    }),
  );
  if (perRank.length === 0) return [];
  return perRank.slice(1).reduce((common, spans) => intersect(common, spans), perRank[0]);
}

/** What idleLoaderSpans reads of an epoch event. */
type EpochGap = { t: number; firstWaitMs: number; createMs: number; gapMs?: number };

function intersect(a: readonly TimeSpan[], b: readonly TimeSpan[]): TimeSpan[] {
  return a.flatMap((x) =>
    b.flatMap((y) => {
      const [startMs, endMs] = [Math.max(x.startMs, y.startMs), Math.min(x.endMs, y.endMs)];
      return endMs > startMs ? [{ startMs, endMs }] : [];
    }),
  );
}
