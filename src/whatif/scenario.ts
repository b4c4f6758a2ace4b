/**
 * The question the what-if model answers: the machine and job to predict for, the profiled one by default, and the
 * counts a scenario implies (nodes, loader workers, the copies of prep and step that several jobs run).
 */
import type { CachePolicy } from './cache-policy.js';
import type { FittedModel } from './model.js';

/** A question: the machine and job to predict for. */
export interface Scenario {
  /** Cache available to the dataset, bytes. */
  cacheBytes: number;
  /** CPUs for the whole server (all ranks). */
  cpus: number;
  /** Storage read bandwidth for the whole server, bytes/s. */
  storageBytesPerSec: number;
  /** Accelerators (data-parallel ranks) per server. */
  gpus: number;
  /** Accelerator speed-up factor: compute time is divided by it. */
  gpuSpeedup: number;
  /** Pre-processing speed-up factor: the prep CPU per sample is divided by it; absent: 1, as profiled. */
  prepSpeedup?: number;
  /** Cache policy. */
  cachePolicy: CachePolicy;
  /** Epochs of the job to average over (the first one cold), or null for the steady state (epoch 2 on). */
  epochs: number | null;
  /**
   * Loader workers per rank (DataLoader num_workers); null: as profiled, or not modelled when the job did not report
   * them.
   */
  workers: number | null;
  /** Remote data: requests in flight per loader worker (threads per worker); null or absent: as profiled. */
  inFlightPerWorker?: number | null;
  /** Remote data: seconds from a request to its first byte (a farther or nearer store); null or absent: as profiled. */
  requestLatencySec?: number | null;
  /**
   * Remote data: bytes of one object (a shard of many samples), each fetched by one request; null or absent: as
   * profiled.
   */
  objectBytes?: number | null;
  /**
   * Concurrent jobs on this server reading the same dataset (a hyper-parameter search), each with `gpus` ranks of its
   * own; null or absent: one.
   */
  jobs?: number | null;
  /**
   * With several jobs: whether they share one fetch and one prep of each sample (CoorDL's coordinated prep) instead of
   * each reading and pre-processing its own; null or absent: independent.
   */
  coordinated?: boolean | null;
  /** Servers of the job, each as this scenario describes (its CPUs, cache, storage, ranks); null or absent: one. */
  nodes?: number | null;
  /**
   * With several nodes: the dataset spread over the nodes' caches (CoorDL's partitioned cache, each never evicting): a
   * miss on one node is read from the peer that holds the sample; null or absent: each node caches alone.
   */
  partitioned?: boolean | null;
  /** Bytes/s a node reads from a peer's cache (the network between the nodes); needed with `partitioned`. */
  peerBytesPerSec?: number | null;
}

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
