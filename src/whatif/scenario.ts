/**
 * The question the what-if model answers: the machine and job to predict for, the profiled one by default, and the
 * counts a scenario implies (nodes, loader workers, the copies of prep and step that several jobs run).
 */
import type { FittedModel } from './model.js';
import type { z } from 'zod';
import type { ScenarioSchema } from '../schema/whatif-output.js';

/** A question: the machine and job to predict for (each field: docs/json-output.md). */
export type Scenario = z.infer<typeof ScenarioSchema>;

/** The scenario of the profiled machine: default cache, profiled CPUs, measured storage, profiled ranks. */
export function baseScenario(model: FittedModel): Scenario {
  return {
    cacheBytes: model.defaultCacheBytes,
    cpus: model.profiledCpus,
    storageBytesPerSec: model.storageBytesPerSec,
    gpus: model.profiledRanks,
    gpuSpeedup: 1,
    cachePolicy: 'page-cache',
    epochs: null,
    workers: null,
  };
}

/** Nodes of a scenario (1 when absent). */
export function scenarioNodes(scenario: Scenario): number {
  return Math.max(1, scenario.nodes ?? 1);
}

/** Loader workers per rank of a scenario: asked, or as profiled (null: not modelled). */
export function scenarioWorkers(model: FittedModel, scenario: Scenario): number | null {
  return scenario.workers ?? model.profiledWorkers;
}

/** How many times the server does each rank's prep and each rank's step per sample: K jobs, sharing prep or not. */
export interface JobShare {
  prepCopies: number;
  stepCopies: number;
}

export const ONE_JOB: JobShare = { prepCopies: 1, stepCopies: 1 };

/** The scenario's jobs: K steps of each rank; K preps and fetches, or one where coordinated. */
export function jobShare(scenario: Scenario): JobShare {
  const jobs = Math.max(1, scenario.jobs ?? 1);
  return { prepCopies: scenario.coordinated ? 1 : jobs, stepCopies: jobs };
}
