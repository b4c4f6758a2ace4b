// What a profile run is given and what it gives back: the parsed input, the hooks that report its progress, and its
// outcome (run-profile.ts runs it).
import type { ExitCode } from '../errors.js';
import type { Mode } from '../schema/events.js';
import type { ModeResult, Profile } from '../schema/profile.js';
import type { CpuLedger } from '../system/kernel/cpu-ledger.js';
import type { ArtifactSink } from '../store/artifact-sink.js';
import type { OpenedSource } from './data-sources/data-source.js';
import type { DownloadProgress } from './data-sources/source-run.js';
import type { NodesInput } from './nodes/node-runs.js';
import type { ModeProgress } from './run-mode.js';
import type { ModeRunInput } from './run-input.js';
import type { LaunchRunner, ModeRunner } from './run-setup.js';
import type { ReadProber } from './storage-probe.js';
import type { Job } from './supervisor.js';

/** Everything a profile run needs, already parsed and validated. */
export interface ProfileRunInput
  extends Pick<
      ModeRunInput,
      | 'argv'
      | 'cwd'
      | 'env'
      | 'runAs'
      | 'precision'
      | 'minIterations'
      | 'maxIterations'
      | 'timeoutSec'
      | 'stopGraceSec'
      | 'killGraceSec'
      | 'sync'
      | 'pollMs'
    >,
    Partial<Pick<ModeRunInput, 'firstIterationTimeoutSec' | 'hangTimeoutSec'>> {
  /** Name of the job in the profile and its file name. */
  jobName: string;
  /** The dataset's folders (--data), absolute; empty for remote data. */
  dataRoots: string[];
  /** Remote data as named (--remote, --endpoint), without credentials or query; absent for local files. */
  remote?: { url: string; endpoint: string | null; jobCache?: string | null; netMeter?: 'client' | 'proxy' };
  /** The modes to run, in order (each run's budget is a share of maxIterations). */
  modes: Mode[];
  /** Read-bandwidth limit for the cold mode, bytes/s, or null. */
  storageBwBytesPerSec: number | null;
  /** Use the global drop_caches for the cold mode (root only). */
  dropCaches: boolean;
  /** Where the profile is written. */
  outFile: string;
  /** What saves the profile; the disk unless a test passes a MemorySink. */
  sink?: ArtifactSink;
  /** Where the samples come from: lists the data, sets each mode's state, meters its reads (openDataSource; fakes). */
  dataSource: OpenedSource;
  /** Runs of each mode (default 2: in order, then reversed, so a steady drift cancels; docs/method.md, "Drift"). */
  passes?: number;
  /** CPU counts at which to run the cached mode again (profile --cpus), or none. */
  cpuSweep?: number[];
  /** Loader worker counts at which to run the cached mode again (profile --workers, DSA_NUM_WORKERS), or none. */
  workersSweep?: number[];
  /** Pause DAMON's proactive reclaim while profiling (default true; profile --keep-reclaim sets false). */
  pauseReclaim?: boolean;
  /** The run registry's folder (run-registry.ts) and --allow-concurrent; absent: not registered (tests). */
  registry?: { dir: string; allowConcurrent: boolean };
  /** Run the overlap probe after the modes (profile --overlap). */
  overlapProbe?: boolean;
  /** nvidia-smi command, or null to skip GPU sampling. */
  nvidiaSmi: string | null;
  /** Reads of the storage probe after the modes; the data source's unless a test passes its own. */
  readProber?: ReadProber;
  /** Run the storage probe after the modes (default true); gate --against's rounds read only the pace. */
  storageProbe?: boolean;
  /** Runs one mode of the job; runMode unless a test passes a fake (the schedule is then one launch a run). */
  modeRunner?: ModeRunner;
  /** Runs a launch of several modes; the real runLaunch unless a test passes a fake. */
  launchRunner?: LaunchRunner;
  /** The CPU ledger the data source was given, for the sampler to charge too; absent: each launch's own. */
  ledger?: CpuLedger;
  /** Let the job save its checkpoints and log to its trackers for real (profile --keep-outputs). */
  keepOutputs?: boolean;
  /** profile --continue: the blocks ride the start of the real run, which trains on; its exit code is the outcome's. */
  continueRun?: boolean;
  /** Start the job once a run (profile --separate-launches), not once for every mode and pass. */
  separateLaunches?: boolean;
  /** A job on several nodes, one CLI on each (src/profile/nodes/); absent: one node. */
  nodes?: NodesInput;
}

export interface ProfileRunHooks {
  /** A run starts: a mode name, or cached-<n>cpu in a CPU sweep; `inLaunch`: a block of the launch already running. */
  onModeStart?: (label: string, inLaunch?: boolean) => void;
  /** Called about every poll with the progress of the run. */
  onProgress?: (progress: ModeProgress) => void;
  /** A run ended, with its result. */
  onModeDone?: (result: ModeResult) => void;
  /** What the profile does that the user should know, said once (what happens to the job's outputs). */
  onNote?: (message: string) => void;
  /** A download of the data source's (remote data's cached mode): at its start, about once a second, at its end. */
  onDownload?: (progress: DownloadProgress) => void;
  /** Something limits what the profile can prove; said as soon as it is known. */
  onWarning?: (message: string) => void;
  /** A run's job has started (gate --against's slices stop and resume it). */
  onJobStarted?: (job: Job) => void;
  /** Registers a SIGINT/SIGTERM handler; returns its remover. */
  onSignal: (handler: (signal?: NodeJS.Signals) => void) => () => void;
}

export interface ProfileRunOutcome {
  /** The profile as written. */
  profile: Profile;
  /** Where it was written. */
  path: string;
  /** Ok, JobFailed or Interrupted. */
  exitCode: ExitCode;
  /** For a failed job: the last lines of its stderr. */
  failureTail: string | null;
  /** Why another node ended a profile over several nodes (exit NodeLost, or JobFailed where its job failed). */
  nodeLost?: string;
  /** The data's endpoint failed or stopped answering after the profile was started (exit Environment...): why. */
  stopped?: string;
}
