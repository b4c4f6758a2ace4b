// validate's point kinds, one row each: how a point is named to the user and on disk, which scenario the model predicts
// it at, and how long it runs. The plan (plan.ts), the runs (run-validate.ts) and the progress lines
// (report/validate-progress.ts) read this table instead of telling the kinds apart themselves, so a new kind is one row
// here and its measurer in measure-point.ts (MEASURERS).
import type { z } from 'zod';
import type { ValidationPointSchema } from '../schema/validate-output.js';
import { formatBytes, formatRate } from '../units.js';
import type { Scenario } from '../whatif/model.js';

/**
 * One point to check: a cache size, a CPU count, or the control (the profiled settings again, which shows how far the
 * job's pace moves between runs).
 */
export type ValidationPoint = z.infer<typeof ValidationPointSchema>;

/** The kinds of points validate runs. */
export type PointKindName = ValidationPoint['kind'];

/** A point of one kind. */
export type PointOf<K extends PointKindName> = Extract<ValidationPoint, { kind: K }>;

/** What validate knows about one kind of point. */
export interface PointKind<P extends ValidationPoint> {
  /** The point in a few words: the plan, the progress lines and the report. */
  describe(point: P): string;
  /** The point's name in its run folder (`point-<n>-<label>`). */
  folderLabel(point: P): string;
  /**
   * How long it runs: `epochs` (a cache point: the first epoch fills the cache, the rest are measured) or
   * `until-precise` (the 95% CI tight, or the iteration budget spent).
   */
  runs: 'epochs' | 'until-precise';
  /** The scenario the model predicts it at, from the profiled one (`datasetBytes`: the whole dataset cached). */
  scenario(base: Scenario, point: P, datasetBytes: number): Scenario;
}

/** The profiled settings with the whole dataset cached: the points that run the cached mode. */
function cachedScenario(base: Scenario, datasetBytes: number): Scenario {
  return { ...base, cacheBytes: datasetBytes, epochs: null };
}

/** Every kind's row. */
export const POINT_KINDS: { [K in PointKindName]: PointKind<PointOf<K>> } = {
  control: {
    describe: () => 'control (as profiled)',
    folderLabel: () => 'control',
    runs: 'until-precise',
    scenario: (base, _point, datasetBytes) => cachedScenario(base, datasetBytes),
  },
  cache: {
    describe: (point) =>
      `page cache ${formatBytes(point.cacheBytes)}${point.recommended ? ' (recommended)' : ''}` +
      `${point.cpus !== undefined ? ` at ${point.cpus} CPU(s)` : ''}`,
    folderLabel: (point) => `cache-${point.cacheBytes}${point.cpus !== undefined ? `-cpus-${point.cpus}` : ''}`,
    runs: 'epochs',
    // Its cache held by the page cache's LRU, at its CPUs where it names them (a cell of whatif --matrix).
    scenario: (base, point) => ({
      ...base,
      cacheBytes: point.cacheBytes,
      cachePolicy: 'page-cache',
      epochs: null,
      ...(point.cpus !== undefined ? { cpus: point.cpus } : {}),
    }),
  },
  cpus: {
    describe: (point) => `${point.cpus} CPU(s)`,
    folderLabel: (point) => `cpus-${point.cpus}`,
    runs: 'until-precise',
    scenario: (base, point, datasetBytes) => ({ ...cachedScenario(base, datasetBytes), cpus: point.cpus }),
  },
  workers: {
    describe: (point) => `num_workers ${point.workers} per rank`,
    folderLabel: (point) => `workers-${point.workers}`,
    runs: 'until-precise',
    scenario: (base, point, datasetBytes) => ({ ...cachedScenario(base, datasetBytes), workers: point.workers }),
  },
  bandwidth: {
    describe: (point) => `cold at ${formatRate(point.bytesPerSec)}`,
    folderLabel: (point) => `bandwidth-${Math.round(point.bytesPerSec)}`,
    runs: 'until-precise',
    // It runs cold: nothing cached, every read at the bandwidth.
    scenario: (base, point) => ({ ...base, cacheBytes: 0, epochs: null, storageBytesPerSec: point.bytesPerSec }),
  },
  latency: {
    describe: (point) => `cold at ${(point.latencySec * 1000).toFixed(0)} ms to a first byte`,
    folderLabel: (point) => `latency-${Math.round(point.latencySec * 1000)}ms`,
    runs: 'until-precise',
    // Cold too, every request waiting that long for its first byte.
    scenario: (base, point) => ({ ...base, cacheBytes: 0, epochs: null, requestLatencySec: point.latencySec }),
  },
  write: {
    describe: (point) => `writes held to ${formatRate(point.bytesPerSec)}`,
    folderLabel: (point) => `write-${Math.round(point.bytesPerSec)}`,
    runs: 'until-precise',
    // As profiled, the whole dataset cached: its saves are added by writePrediction.
    scenario: (base, _point, datasetBytes) => cachedScenario(base, datasetBytes),
  },
};

/** The row of a point's kind. */
export function pointKind(point: ValidationPoint): PointKind<ValidationPoint> {
  // The table's type pairs each row with its own kind's points; TypeScript cannot follow that through a union.
  return POINT_KINDS[point.kind] as PointKind<ValidationPoint>;
}

/** A point in a few words. */
export function describePoint(point: ValidationPoint): string {
  return pointKind(point).describe(point);
}

/** The scenario the model predicts a point at. */
export function pointScenario(base: Scenario, point: ValidationPoint, datasetBytes: number): Scenario {
  return pointKind(point).scenario(base, point, datasetBytes);
}
