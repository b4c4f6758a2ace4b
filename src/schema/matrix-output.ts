/**
 * The contract of `ds-analyzer whatif --matrix --json` (docs/json-output.md): Synergy's CPU x memory table of one job,
 * for a scheduler to read. The producer (src/whatif/matrix.ts) builds a WhatifMatrix; matrixOutput() types it against
 * this schema.
 */
import { z } from 'zod';
import { outputHeader } from './numbers.js';
import { ScenarioSchema } from './whatif-output.js';
import { MATRIX_OUTPUT_VERSION } from './versions.js';

const nonneg = () => z.number().nonnegative();

export const MatrixCellSchema = z.object({
  /** CPUs of the server (all ranks). */
  cpus: z.number().int().positive(),
  /** Cache available to the dataset, bytes. */
  cacheBytes: nonneg(),
  /** cacheBytes over the dataset's bytes. */
  cacheFraction: nonneg(),
  /** Predicted throughput, all ranks together, samples/s. */
  samplesPerSec: nonneg(),
  /** Its slow (low) and fast (high) end over what the model assumed, samples/s. */
  samplesPerSecRange: z.object({ low: nonneg(), high: nonneg() }),
  /** Predicted time per iteration of one rank, ms. */
  iterMs: nonneg(),
  /** Predicted prep stall per iteration, ms. */
  prepStallMs: nonneg(),
  /** Predicted fetch stall per iteration, ms. */
  fetchStallMs: nonneg(),
  /** The limiting stage. */
  bottleneck: z.enum(['compute', 'prep', 'fetch']),
  /** True where the profile ran this setting (the cached mode, all the dataset cached, at a CPU count it measured). */
  measured: z.boolean(),
});

export const MatrixOutputSchema = z.object({
  ...outputHeader(MATRIX_OUTPUT_VERSION, 'whatif-matrix'),
  /** Profile file read. */
  profilePath: z.string(),
  /** Job name of the profile. */
  jobName: z.string(),
  /** The dataset's bytes (cacheFraction's denominator). */
  datasetBytes: nonneg(),
  /** The profiled CPU count and the cache the profiled host could give the dataset. */
  profiled: z.object({ cpus: z.number().int().positive(), cacheBytes: nonneg() }),
  /** The settings every cell shares (its cpus and cacheBytes are the profiled ones; each cell sets its own). */
  scenario: ScenarioSchema,
  /** The grid's CPU counts, ascending. */
  cpus: z.array(z.number().int().positive()),
  /** The grid's cache sizes, bytes, ascending. */
  cacheBytes: z.array(nonneg()),
  /** One per cache size and CPU count: cache sizes in order, CPU counts in order within each. */
  cells: z.array(MatrixCellSchema),
  /** Assumptions that move some cell by more than 1%, in words; empty when every cell rests on measurements alone. */
  assumptions: z.array(z.string()),
  /** A validate command that measures up to three cells the profile did not run; null when none can be. */
  validateCommand: z.string().nullable(),
});
export type MatrixOutput = z.infer<typeof MatrixOutputSchema>;
