/**
 * The what-if query: fit the model to a profile, predict the asked scenario
 * next to the profiled one, sweep cache and CPUs, and recommend. One core
 * function for the CLI; returns plain data (JSON-safe).
 */
import type { Mode } from '../schema/events.js';
import type { Profile } from '../schema/profile.js';
import { baseScenario, fitModel, predict, scenarioWorkers, selfCheck, type CpuScaling, type FitOptions, type ModelParameter, type NotEnoughData, type Prediction, type Scenario } from './model.js';
import { recommend, type Recommendation } from './recommend.js';
import { MISSING_TEXT } from './advice-text.js';
import { cacheSweep, cpuSweep, cpuSweepCounts, workersSweep, workersSweepCounts, type CacheSweepRow, type CpuSweepRow, type WorkersSweepRow } from './sweep.js';

/** The settings a user changed; the rest stay as profiled. */
export type WhatifQuery = Partial<Scenario>;

/** Everything `ds-analyzer whatif` shows. */
export interface WhatifResult {
  /** Profile file read. */
  profilePath: string;
  /** Job name of the profile. */
  jobName: string;
  /** Model parameters with their sources. */
  parameters: ModelParameter[];
  /** CPU scaling used: linear (assumed) or fitted. */
  cpuScaling: CpuScaling;
  /** The model at the profiled settings against each measured mode. */
  selfCheck: { mode: Mode; measuredIterMs: number; predictedIterMs: number }[];
  /** Prediction at the profiled settings (default cache: what the page cache could give the dataset). */
  baseline: Prediction;
  /** Prediction for the asked scenario. */
  prediction: Prediction;
  /** Which settings the user changed. */
  changed: (keyof Scenario)[];
  /** Cache sweep 0..D at the asked scenario. */
  cacheSweep: CacheSweepRow[];
  /** CPU sweep at the asked scenario. */
  cpuSweep: CpuSweepRow[];
  /** Loader-workers sweep at the asked scenario; empty when the job did not report its workers. */
  workersSweep: WorkersSweepRow[];
  /** Smallest changes that remove each stall, at the asked scenario. */
  recommendations: Recommendation[];
  /** Assumptions and limits. */
  caveats: string[];
}

/** Runs a what-if query on a profile, or says what the profile lacks for it. Pure (the cache simulation is seeded). */
export function whatif(profile: Profile, profilePath: string, query: WhatifQuery, options: FitOptions = {}): WhatifResult | NotEnoughData {
  const fit = fitModel(profile, options);
  if (fit.kind === 'not-enough-data') return fit;
  const model = fit.model;
  const base = baseScenario(model);
  const changed = (Object.keys(query) as (keyof Scenario)[]).filter((k) => query[k] !== undefined);
  const scenario: Scenario = { ...base };
  for (const key of changed) (scenario as unknown as Record<string, unknown>)[key] = query[key];
  const recommendations = recommend(model, scenario);
  const cpusNeeded = recommendations.find((r) => r.kind === 'cpus')?.value ?? null;
  const workersNeeded = recommendations.find((r) => r.kind === 'workers')?.value ?? null;
  const workersOfScenario = scenarioWorkers(model, scenario);
  const caveats = [...model.caveats];
  // The workers the prediction ran with, all ranks together: as asked, or as profiled.
  const workers = workersOfScenario === null ? null : workersOfScenario * scenario.gpus;
  if (workers !== null && scenario.cpus > Math.max(workers, model.profiledCpus)) caveats.push(MISSING_TEXT.workersCap(scenario.cpus, workers));
  if (scenario.workers !== null && model.profiledWorkers === null) caveats.push(MISSING_TEXT.workersUnknown(scenario.workers));
  return {
    profilePath,
    jobName: profile.jobName,
    parameters: model.parameters,
    cpuScaling: model.cpuScaling,
    selfCheck: selfCheck(model, profile),
    baseline: predict(model, { ...base, epochs: scenario.epochs }),
    prediction: predict(model, scenario),
    changed,
    cacheSweep: cacheSweep(model, scenario),
    cpuSweep: cpuSweep(model, scenario, cpuSweepCounts(scenario.cpus, cpusNeeded === null ? [] : [cpusNeeded])),
    workersSweep: workersOfScenario === null ? [] : workersSweep(model, scenario, workersSweepCounts(workersOfScenario, scenario.cpus, workersNeeded === null ? [] : [workersNeeded])),
    recommendations,
    caveats,
  };
}
