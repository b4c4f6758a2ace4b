/**
 * The one route from a profile to the what-if curves: the model's sweeps of cache size, CPUs and loader workers at one
 * scenario. `whatif` sweeps the asked scenario (its answer's tables); the report draws the profiled one
 * (`whatifCurves`). Both come through `scenarioCurves`, so the two can never sweep a different model.
 */
import type { Profile } from '../schema/profile.js';
import type { WhatifOutputBody } from '../schema/whatif-output.js';
import {
  baseScenario,
  fitModel,
  scenarioWorkers,
  type FittedModel,
  type NotEnoughData,
  type Scenario,
} from './model.js';
import { cacheSweep, cpuSweep, cpuSweepCounts, workersSweep, workersSweepCounts } from './sweep.js';

/** The sweeps of one scenario, each with the rest of the scenario held. */
export type SweepCurves = Pick<WhatifOutputBody, 'cacheSweep' | 'cpuSweep' | 'workersSweep'>;

/** How finely to sweep, and which values the sweeps must hold besides their own grid. */
export interface SweepOptions {
  /** Steps of the cache sweep from 0 to the dataset; null: no cache sweep (the fetch stage was not measured). */
  cacheSteps: number | null;
  /** CPU counts to include (a recommendation's). */
  alsoCpus?: number[];
  /** Worker counts to include (a recommendation's). */
  alsoWorkers?: number[];
}

/** The cache, CPU and workers sweeps of `scenario`. Pure. */
export function scenarioCurves(model: FittedModel, scenario: Scenario, options: SweepOptions): SweepCurves {
  const workers = scenarioWorkers(model, scenario);
  return {
    cacheSweep: options.cacheSteps === null ? [] : cacheSweep(model, scenario, options.cacheSteps),
    cpuSweep: cpuSweep(model, scenario, cpuSweepCounts(scenario.cpus, options.alsoCpus ?? [])),
    workersSweep:
      workers === null
        ? []
        : workersSweep(model, scenario, workersSweepCounts(workers, scenario.cpus, options.alsoWorkers ?? [])),
  };
}

/** Cache sizes on the report's curve: 0 to the dataset size in this many steps. */
const REPORT_CACHE_STEPS = 20;

/** A profile's curves at its profiled settings, with the model and scenario they were swept on. */
export interface ProfiledCurves {
  kind: 'curves';
  /** The model fitted to the profile (all three modes). */
  model: FittedModel;
  /** The profiled settings the curves hold fixed. */
  scenario: Scenario;
  /** The sweeps. */
  curves: SweepCurves;
}

/**
 * The what-if curves of a profile at its profiled settings, for the report; or what the profile lacks for the model
 * (all three modes are needed here: a curve of cache sizes means nothing without the fetch stage).
 */
export function whatifCurves(profile: Profile): ProfiledCurves | NotEnoughData {
  const fit = fitModel(profile);
  if (fit.kind === 'not-enough-data') return fit;
  const scenario = baseScenario(fit.model);
  const curves = scenarioCurves(fit.model, scenario, { cacheSteps: REPORT_CACHE_STEPS });
  return { kind: 'curves', model: fit.model, scenario, curves };
}
