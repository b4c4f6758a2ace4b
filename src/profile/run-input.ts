// What a run of the job needs and reports while it runs: for run-mode.ts and run-launch.ts alike.
import type { Mode } from '../schema/events.js';
import type { Dataset } from '../system/dataset/dataset.js';
import type { Sampler, SamplerOptions } from '../system/probes/samplers.js';
import type { GpuSampler } from '../system/probes/gpu.js';
import type { Job, StartJob } from './supervisor.js';
import type { CpuLedger } from '../system/kernel/cpu-ledger.js';
import type { CacheState } from './cache-states/cache-state.js';
import type { DataSource } from './data-sources/data-source.js';
import type { RunAs } from './run-as.js';

/** What one mode needs to run. */
export interface ModeRunInput {
  /** The mode to run: which cache state, and what the job is told (DSA_MODE). */
  mode: Mode;
  /** The job's command. */
  argv: string[];
  /** Working folder of the job. */
  cwd: string;
  /** The CLI's environment, which the job inherits (the protocol's variables added). */
  env: NodeJS.ProcessEnv;
  /** The user the job is started as (profile --as-user, SUDO_USER by default under sudo); absent: the CLI's own. */
  runAs?: RunAs;
  /** The dataset the mode reads, as its data source listed it. */
  dataset: Dataset;
  /** The data source: meters the run's fetched bytes and says what limits its proof. */
  dataSource: Pick<DataSource, 'startMeter' | 'proofLimit'>;
  /** Folder for this mode's events and logs. */
  modeDir: string;
  /** Target relative half-width of the per-iteration time. */
  precision: number;
  /** Fewest iterations before precision may stop the mode. */
  minIterations: number;
  /** Iteration budget: the job is told it (DSA_ITERATIONS) and ends there. */
  maxIterations: number;
  /** Fewest blocks before precision may stop the mode (default MIN_STOP_BLOCKS). */
  minStopBlocks?: number;
  /** Seconds before the job is stopped whatever it reported. */
  timeoutSec: number;
  /** Seconds the job may run without reporting an iteration before it is stopped ('no-iterations'). */
  firstIterationTimeoutSec: number;
  /** Fewest seconds without an iteration before the job is stopped as hung (and 30x the median; analysis/stalls.ts). */
  hangTimeoutSec?: number;
  /** Seconds the job gets to exit after the stop file appears, before SIGTERM. */
  stopGraceSec: number;
  /** Seconds between SIGTERM and SIGKILL. */
  killGraceSec: number;
  /** Synchronise the accelerator at iteration boundaries (DSA_SYNC). */
  sync: boolean;
  /** Sampling period of resources and events, ms. */
  pollMs: number;
  /** Wraps the job's argv (cgroup join, CPU affinity); identity when nothing to do. */
  wrapArgv: (argv: string[]) => string[];
  /** The mode's state, from the data source (its modeState, a held share, a capped cache). */
  cacheState: CacheState;
  /** Loader workers to ask the job for (DSA_NUM_WORKERS); absent: the script's own setting. */
  numWorkers?: number;
  /** GPU sampler whose latest reading goes into each resource sample. */
  gpu?: Pick<GpuSampler, 'latest' | 'readings'>;
  /** Called about every poll with the progress of the mode. */
  onProgress?: (progress: ModeProgress) => void;
  /** Awaited once the state is set, before the job starts (every node's set: node-link.ts); rejecting ends the run. */
  beforeJobStart?: () => Promise<void>;
  /** Called once the job is running, so an interrupt can reach it. */
  onJobStarted?: (job: Job) => void;
  /** Starts the job: SupervisedJob.start unless a test passes a fake (test/support/fake-job.ts). */
  startJob?: StartJob;
  /** Starts the resource sampler: startSampler unless a test passes a fake (test/support/fake-sampler.ts). */
  startSampler?: (options: SamplerOptions) => Sampler;
  /** The profile's CPU ledger, charged by the sampler, the event reader and the data source; absent: the run's own. */
  ledger?: CpuLedger;
  /** Reports whether the user interrupted. */
  interrupted: () => boolean;
}

/** Live state of a running mode. */
export interface ModeProgress {
  /** The mode running. */
  mode: Mode;
  /** Iterations reported so far by the slowest rank. */
  iterations: number;
  /** The mode's iteration budget. */
  maxIterations: number;
  /** Relative CI half-width so far, when known. */
  relativePrecision: number | null;
  /** Median per-iteration time so far, ms. */
  medianIterMs: number | null;
  /** The block's label, in a launch of several blocks. */
  label?: string;
  /** Seconds the later blocks of a launch should take, once one has ended (their states' set-up not counted). */
  laterBlocksSec?: number;
  /** Seconds since the job started. */
  elapsedSec: number;
}
