/**
 * The what-if query: fit the model to a profile, predict the asked scenario next to the profiled one, sweep cache and
 * CPUs, and recommend. One core function for the CLI; returns plain data (JSON-safe).
 */
import type { Profile } from '../schema/profile.js';
import {
  baseScenario,
  fitModel,
  predict,
  scenarioWorkers,
  selfCheck,
  type FitOptions,
  type FittedModel,
  type NotEnoughData,
  type Prediction,
  type Scenario,
} from './model.js';
import { recommend, type Recommendation } from './recommend.js';
import { atEnd, predictionRange } from './assumptions.js';
import { MISSING_TEXT } from './advice-text.js';
import { pipelineWhatif, type PipelineQuery } from './pipeline-stalls.js';
import type { PipelineWhatif, WhatifOutputBody } from '../schema/whatif-output.js';
import { prepStageAdvice } from './prep-stage-advice.js';
import { scenarioCurves } from './curves.js';
import { KNOBS } from './knobs/index.js';
import { askedPipelineFlags } from './knobs/pipeline.js';

/** The settings a user changed; the rest stay as profiled. */
export type WhatifQuery = Partial<Scenario>;

/** Everything `ds-analyzer whatif` shows (each field: docs/json-output.md). */
export type WhatifResult = WhatifOutputBody;

/**
 * The settings that only the fetch stage answers (storage, the cache, remote requests), each with its flag, in --help's
 * order: a model fitted without the cold mode leaves them as profiled and names them.
 */
const FETCH_SETTINGS: Partial<Record<keyof Scenario, string>> = Object.assign({}, ...KNOBS.map((k) => k.fetchStage));

/** Cache sizes in whatif's sweep table: 0 to the dataset in this many steps. */
const WHATIF_CACHE_STEPS = 10;

/** The recommendations that change the fetch stage. */
const FETCH_ADVICE: ReadonlySet<Recommendation['kind']> = new Set(['cache', 'storage', 'requests', 'objects']);

/**
 * Runs a what-if query on a profile, or says what the profile lacks for it. A profile without the fetch stage's
 * measurements (no cold mode) still answers what compute and prep decide (CPUs, workers, accelerators): the cache and
 * storage settings asked are left as profiled and named in `unanswered`; only a query that asks nothing else is not
 * enough data. Pure (the cache simulation is seeded).
 */
export function whatif(
  profile: Profile,
  profilePath: string,
  query: WhatifQuery,
  options: FitOptions = {},
  pipelineQuery: PipelineQuery = {},
): WhatifResult | NotEnoughData {
  const fit = fitModel(profile, { ...options, fetchOptional: true });
  if (fit.kind === 'not-enough-data') return fit;
  const model = fit.model;
  const base = baseScenario(model);
  const asked = (Object.keys(query) as (keyof Scenario)[]).filter((k) => query[k] !== undefined);
  const missing = model.fetchUnmeasured;
  const refused = missing ? asked.filter((k) => FETCH_SETTINGS[k] !== undefined) : [];
  const changed = asked.filter((k) => !refused.includes(k));
  if (missing && refused.length > 0 && changed.length === 0) {
    return { ...missing, reason: MISSING_TEXT.notAnswered(refusedFlags(refused), missing) };
  }
  const scenario: Scenario = { ...base };
  for (const key of changed) (scenario as unknown as Record<string, unknown>)[key] = query[key];
  // Advice is made on the pessimistic end of what the model assumed.
  const pessimistic = atEnd(model, scenario, 'pessimistic');
  const recommendations = recommend(pessimistic.model, pessimistic.scenario).filter(
    (r) => !missing || !FETCH_ADVICE.has(r.kind),
  );
  const unanswered = missing
    ? [
        ...(refused.length > 0 ? [MISSING_TEXT.notAnswered(refusedFlags(refused), missing)] : []),
        MISSING_TEXT.fetchAdviceUnanswered(missing),
      ]
    : [];
  const cpusNeeded = recommendations.find((r) => r.kind === 'cpus')?.value ?? null;
  const workersNeeded = recommendations.find((r) => r.kind === 'workers')?.value ?? null;
  const prediction = withRange(model, scenario);
  const jobs = scenario.jobs ?? 1;
  const baseline = withRange(model, { ...base, epochs: scenario.epochs });
  const pipeline = pipelineWhatif(profile, pipelineQuery, baseline, prediction);
  const caveats = [...scenarioCaveats(profile, model, scenario), ...unappliedPipelineFlags(pipelineQuery, pipeline)];
  const prepStage = prepStageAdvice(profile, baseline);
  return {
    profilePath,
    jobName: profile.jobName,
    parameters: model.parameters,
    cpuScaling: model.cpuScaling,
    selfCheck: selfCheck(model, profile),
    baseline,
    prediction,
    changed,
    pageCachePolicy: model.pageCachePolicy,
    ...scenarioCurves(model, scenario, {
      cacheSteps: missing ? null : WHATIF_CACHE_STEPS,
      alsoCpus: cpusNeeded === null ? [] : [cpusNeeded],
      alsoWorkers: workersNeeded === null ? [] : [workersNeeded],
    }),
    recommendations,
    ...(prepStage ? { prepStage } : {}),
    adviceAssumptions: model.assumptions.map((a) => a.text),
    caveats,
    // validate fits the whole model, cold mode included: it has no run to offer a profile without one.
    validateCommand: missing ? null : validateCommand(profilePath, model, scenario, changed),
    dataCache: model.remoteObjects ? 'object-cache' : 'page-cache',
    ...(jobs > 1 ? { jobs: jobsComparison(model, scenario, jobs) } : {}),
    ...(scenario.partitioned && (scenario.nodes ?? 1) > 1
      ? { nodes: nodesComparison(model, scenario, scenario.nodes!) }
      : {}),
    ...(pipeline ? { pipeline } : {}),
    unanswered,
  };
}

/** The model's caveats, then the asked scenario's: several nodes, workers beyond the CPUs, jobs, remote requests. */
function scenarioCaveats(profile: Profile, model: FittedModel, scenario: Scenario): string[] {
  const caveats = [...model.caveats];
  const nodes = profile.nodes?.length ?? 1;
  if (nodes > 1) caveats.push(MISSING_TEXT.severalNodes(nodes));
  const workersOfScenario = scenarioWorkers(model, scenario);
  // The workers the prediction ran with, all ranks together: as asked, or as profiled.
  const workers = workersOfScenario === null ? null : workersOfScenario * scenario.gpus;
  if (workers !== null && scenario.cpus > Math.max(workers, model.profiledCpus))
    caveats.push(MISSING_TEXT.workersCap(scenario.cpus, workers));
  if (scenario.workers !== null && model.profiledWorkers === null)
    caveats.push(MISSING_TEXT.workersUnknown(scenario.workers));
  const jobs = scenario.jobs ?? 1;
  // K jobs share the page cache; each is taken to hit it as one job alone would (see jobsComparison).
  if (jobs > 1) caveats.push(MISSING_TEXT.jobsShareCache(jobs));
  if ((scenario.nodes ?? 1) > 1) caveats.push(MISSING_TEXT.nodesAlike(scenario.nodes!));
  if (model.profiledInFlightPerWorker === null) {
    for (const knob of KNOBS.filter((k) => k.requestsOnly && scenario[k.field] != null)) {
      caveats.push(MISSING_TEXT.noRequests(`--${knob.name}`));
    }
  }
  return caveats;
}

/** The flags of the refused settings, each once, in the order of --help (--cache-policy partitioned sets two). */
function refusedFlags(keys: (keyof Scenario)[]): string[] {
  const flags = (Object.keys(FETCH_SETTINGS) as (keyof Scenario)[])
    .filter((k) => keys.includes(k))
    .map((k) => FETCH_SETTINGS[k]!);
  return [
    ...new Set(flags.includes('--cache-policy partitioned') ? flags.filter((f) => f !== '--cache-policy') : flags),
  ];
}

/**
 * N nodes of one job (CoorDL's partitioned cache): their caches together hold the dataset once, a miss on one node
 * fetched from the peer that holds it, against each node's page cache holding what it read itself.
 */
function nodesComparison(model: FittedModel, scenario: Scenario, count: number): NonNullable<WhatifResult['nodes']> {
  const partitioned = withRange(model, { ...scenario, nodes: count, partitioned: true, cachePolicy: 'minio' });
  const independent = withRange(model, { ...scenario, nodes: count, partitioned: false, cachePolicy: 'page-cache' });
  return { count, independent, partitioned, speedup: speedup(partitioned, independent) };
}

/**
 * K jobs on one dataset (CoorDL's hyper-parameter search): each reading and pre-processing its own samples, K times the
 * reads and the prep CPU, against one fetch and one prep of each sample shared by all K (coordinated); each job's steps
 * run either way.
 */
function jobsComparison(model: FittedModel, scenario: Scenario, count: number): NonNullable<WhatifResult['jobs']> {
  const independent = withRange(model, { ...scenario, jobs: count, coordinated: false });
  const coordinated = withRange(model, { ...scenario, jobs: count, coordinated: true });
  return { count, independent, coordinated, speedup: speedup(coordinated, independent) };
}

/** How many times faster `faster` trains than `slower` (0 when `slower` makes no progress). */
function speedup(faster: Prediction, slower: Prediction): number {
  return slower.samplesPerSec > 0 ? faster.samplesPerSec / slower.samplesPerSec : 0;
}

/** A prediction with the range its assumptions span. */
function withRange(model: FittedModel, scenario: Scenario): Prediction {
  const point = predict(model, scenario);
  return { ...point, range: predictionRange(model, scenario, point, predict) };
}

/**
 * The validate run that measures the asked setting, where the profile did not: validate runs one setting per point (a
 * cache size, a CPU count or a worker count: the knobs with a validateFlag), so a question that changes exactly one of
 * those has one; others have none.
 */
function validateCommand(
  profilePath: string,
  model: FittedModel,
  scenario: Scenario,
  changed: (keyof Scenario)[],
): string | null {
  if (changed.length !== 1) return null;
  const asked = KNOBS.find((k) => k.field === changed[0])?.validateFlag?.(model, scenario) ?? null;
  if (asked === null) return null;
  const quoted = /^[\w./-]+$/.test(profilePath) ? profilePath : `'${profilePath.replace(/'/g, "'\\''")}'`;
  return `ds-analyzer validate ${quoted} ${asked}`;
}

/** A caveat for each asked pipeline setting the profile has nothing to apply to: never ignored without a word. */
function unappliedPipelineFlags(query: PipelineQuery, pipeline: PipelineWhatif | null): string[] {
  const saves = pipeline?.checkpoint ? [] : askedPipelineFlags(query, 'saves');
  const epochs = pipeline?.boundary ? [] : askedPipelineFlags(query, 'epochs');
  return [
    ...(saves.length > 0 ? [MISSING_TEXT.noSaves(saves.join(', '))] : []),
    ...(epochs.length > 0 ? [MISSING_TEXT.noEpochStarts(epochs.join(', '))] : []),
  ];
}
