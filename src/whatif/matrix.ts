/**
 * Synergy's table (Mohan et al., "Looking Beyond GPUs for DNN Scheduling on Multi-Tenant Clusters", OSDI 2022): the
 * job's predicted throughput at each CPU count and cache size of a grid, the rest of the scenario fixed, so a scheduler
 * can give each job the CPUs and memory it is most sensitive to. Each cell carries its range over what the model
 * assumed, and the cells the profile itself ran are marked as measured.
 */
import { predictionRange } from './assumptions.js';
import { baseScenario, predict, type FittedModel, type Scenario } from './model.js';
import { cpuSweepCounts } from './sweep.js';
import type { z } from 'zod';
import type { MatrixCellSchema, MatrixOutput } from '../schema/matrix-output.js';

/** One cell: a CPU count and a cache size. */
export type MatrixCell = z.infer<typeof MatrixCellSchema>;

/** The table: its axes, the scenario its other settings come from, and the cells row by row (cache sizes). */
export type WhatifMatrix = Omit<MatrixOutput, 'schemaVersion' | 'kind'>;

/** The grid's cache sizes when none are asked: none, a quarter, half, three quarters and the whole dataset. */
export const DEFAULT_MATRIX_CACHE_SHARES = [0, 0.25, 0.5, 0.75, 1];

/**
 * The table over `cpus` (default: 1, 2, 4, ... past twice the profiled count) and `cacheBytes` (default:
 * DEFAULT_MATRIX_CACHE_SHARES of the dataset), at `query`'s other settings.
 */
export function whatifMatrix(
  model: FittedModel,
  profile: { path: string; jobName: string },
  axes: { cpus?: number[]; cacheBytes?: number[] },
  query: Partial<Scenario> = {},
): WhatifMatrix {
  const base = baseScenario(model);
  const scenario: Scenario = { ...base, ...definedOnly(query) };
  const cpus = uniqueSorted(axes.cpus ?? cpuSweepCounts(model.profiledCpus));
  const cacheBytes = uniqueSorted(
    axes.cacheBytes ?? DEFAULT_MATRIX_CACHE_SHARES.map((share) => Math.round(share * model.datasetBytes)),
  );
  const assumptions = new Set<string>();
  const cells: MatrixCell[] = [];
  for (const cache of cacheBytes) {
    for (const count of cpus) {
      const at: Scenario = { ...scenario, cpus: count, cacheBytes: cache };
      const point = predict(model, at);
      const range = predictionRange(model, at, point, predict);
      for (const text of range.assumptions) assumptions.add(text);
      cells.push({
        cpus: count,
        cacheBytes: cache,
        cacheFraction: model.datasetBytes > 0 ? cache / model.datasetBytes : 0,
        samplesPerSec: point.samplesPerSec,
        samplesPerSecRange: range.samplesPerSec,
        iterMs: point.iterMs,
        prepStallMs: point.prepStallMs,
        fetchStallMs: point.fetchStallMs,
        bottleneck: point.bottleneck,
        measured: cache >= model.datasetBytes && measuredCpus(model).includes(count) && sameOtherwise(scenario, base),
      });
    }
  }
  return {
    profilePath: profile.path,
    jobName: profile.jobName,
    datasetBytes: model.datasetBytes,
    profiled: { cpus: model.profiledCpus, cacheBytes: base.cacheBytes },
    scenario,
    cpus,
    cacheBytes,
    cells,
    assumptions: [...assumptions],
    validateCommand: validateCells(profile.path, model, cells, scenario, base),
  };
}

/** CPU counts the profile ran the cached mode at: the profiled one, and a CPU sweep's. */
function measuredCpus(model: FittedModel): number[] {
  return [
    model.profiledCpus,
    ...(model.cpuScaling.kind === 'fitted' ? model.cpuScaling.points.map((p) => p.cpus) : []),
  ];
}

/** Whether the cells' other settings are the profiled ones (only then can a cell have been measured). */
function sameOtherwise(scenario: Scenario, base: Scenario): boolean {
  const keys = (Object.keys(scenario) as (keyof Scenario)[]).filter((k) => k !== 'cpus' && k !== 'cacheBytes');
  return keys.every((k) => scenario[k] === base[k]);
}

/**
 * validate --cells for up to three cells the profile did not run, spread over the grid (validate restricts CPUs with an
 * affinity mask, so none above the profiled count, and caps the page cache, so none at 0); null when the cells' other
 * settings are not the profiled ones, which validate cannot run.
 */
function validateCells(
  profilePath: string,
  model: FittedModel,
  cells: readonly MatrixCell[],
  scenario: Scenario,
  base: Scenario,
): string | null {
  if (!sameOtherwise(scenario, base)) return null;
  // No cache at all is the cold mode, which the profile ran; validate's cap cannot hold 0 (the files being read stay
  // resident).
  const runnable = cells.filter(
    (c) => !c.measured && c.cpus <= model.profiledCpus && c.cacheBytes > 0 && c.cacheBytes <= model.datasetBytes,
  );
  if (runnable.length === 0) return null;
  // Spread over both axes: the first, middle and last cache sizes, the CPU counts alternating from the most.
  const caches = [...new Set(runnable.map((c) => c.cacheBytes))];
  const counts = [...new Set(runnable.map((c) => c.cpus))];
  const picks: MatrixCell[] = [...new Set([0, Math.floor((caches.length - 1) / 2), caches.length - 1])].map(
    (row, k) => {
      const inRow = runnable.filter((c) => c.cacheBytes === caches[row]);
      const want = counts[k % 2 === 0 ? counts.length - 1 : 0];
      return inRow.find((c) => c.cpus === want) ?? inRow[0];
    },
  );
  // A grid of fewer rows still offers three cells where it has them.
  for (const cell of runnable) if (picks.length < 3 && !picks.includes(cell)) picks.push(cell);
  const quoted = /^[\w./-]+$/.test(profilePath) ? profilePath : `'${profilePath.replace(/'/g, "'\\''")}'`;
  return `ds-analyzer validate ${quoted} --cells ${picks.map((c) => `${c.cpus}@${c.cacheBytes}`).join(',')}`;
}

function uniqueSorted(values: readonly number[]): number[] {
  return [...new Set(values)].sort((a, b) => a - b);
}

function definedOnly(query: Partial<Scenario>): Partial<Scenario> {
  return Object.fromEntries(Object.entries(query).filter(([, v]) => v !== undefined)) as Partial<Scenario>;
}
