// What a profile run is given and what it gives back: the parsed input, the hooks that report its progress, and
// its outcome (run-profile.ts runs it).
import type { ExitCode } from '../errors.js';
import type { Mode } from '../schema/events.js';
import type { ModeResult, Profile } from '../schema/profile.js';
import type { CpuLedger } from '../system/kernel/cpu-ledger.js';
import type { ArtifactSink } from '../store/artifact-sink.js';
import type { DataSource, DownloadProgress } from './data-sources/data-source.js';
import type { NodesInput } from './nodes/node-runs.js';
import type { RunAs } from './run-as.js';
import type { ModeProgress } from './run-mode.js';
import type { LaunchRunner, ModeRunner } from './run-setup.js';
import type { ReadProber } from './storage-probe.js';

/** Everything a profile run needs, already parsed and validated. */
export interface ProfileRunInput {
  /** The job's command. */
  argv: string[];
  /** Working folder of the job. */
  cwd: string;
  /**
   * The CLI's environment: the job inherits it; its PATH finds taskset, its DSA_CGROUP_PARENT names a delegated cgroup.
   */
  env: NodeJS.ProcessEnv;
  /**
   * The user the job is started as (--as-user; SUDO_USER under sudo), whose the job's folders are; absent: the CLI's
   * own.
   */
  runAs?: RunAs;
  /** Name of the job in the profile and its file name. */
  jobName: string;
  /** The dataset's folders (--data), absolute; empty for remote data. */
  dataRoots: string[];
  /** Remote data as named (--remote, --endpoint), without credentials or query; absent for local files. */
  remote?: { url: string; endpoint: string | null; jobCache?: string | null; netMeter?: 'client' | 'proxy' };
  /** The modes to run, in order. */
  modes: Mode[];
  /** Target relative half-width of each mode's per-iteration time. */
  precision: number;
  /** Fewest iterations of a mode before precision may stop it. */
  minIterations: number;
  /** Iteration budget of a mode (shared by its runs). */
  maxIterations: number;
  /** Seconds before a run is stopped whatever it reported. */
  timeoutSec: number;
  /** Seconds without a first iteration before a mode is stopped as 'no-iterations' (default 300). */
  firstIterationTimeoutSec?: number;
  /** Fewest seconds without an iteration before the job is stopped as hung (default 60; analysis/stalls.ts). */
  hangTimeoutSec?: number;
  /** Seconds the job gets to exit after the stop file appears, before SIGTERM. */
  stopGraceSec: number;
  /** Seconds between SIGTERM and SIGKILL. */
  killGraceSec: number;
  /** Read-bandwidth limit for the cold mode, bytes/s, or null. */
  storageBwBytesPerSec: number | null;
  /** Use the global drop_caches for the cold mode (root only). */
  dropCaches: boolean;
  /** Synchronise the accelerator at iteration boundaries (DSA_SYNC). */
  sync: boolean;
  /** Sampling period of resources and events, ms. */
  pollMs: number;
  /** Where the profile is written. */
  outFile: string;
  /** What saves the profile; the disk unless a test passes a MemorySink. */
  sink?: ArtifactSink;
  /** Where the samples come from: lists the data, sets each mode's state, meters its reads (openDataSource; fakes). */
  dataSource: DataSource;
  /**
   * Runs of each mode (default 2): the modes in order, then in reverse, each run with half the iteration budget, so a
   * steady drift of the machine's pace cancels (docs/method.md, "Drift"). 1: one run of each mode.
   */
  passes?: number;
  /** CPU counts at which to run the cached mode again (profile --cpus), or none. */
  cpuSweep?: number[];
  /**
   * Loader worker counts at which to run the cached mode again (profile
   * --workers), or none: each in the drift-cancelling schedule, beside the
   * cached mode, with DSA_NUM_WORKERS set.
   */
  workersSweep?: number[];
  /**
   * Pause DAMON's proactive reclaim while profiling, where it runs and this
   * process may (default true; profile --keep-reclaim sets false).
   */
  pauseReclaim?: boolean;
  /**
   * Where the profiles running on this machine are registered (run-registry.ts), and whether this one may run beside
   * another (profile --allow-concurrent); absent: not registered (a test's fake runs touch nothing machine-wide).
   */
  registry?: { dir: string; allowConcurrent: boolean };
  /** Run the overlap probe after the modes (profile --overlap). */
  overlapProbe?: boolean;
  /** nvidia-smi command, or null to skip GPU sampling. */
  nvidiaSmi: string | null;
  /** Reads of the storage probe after the modes; the data source's unless a test passes its own. */
  readProber?: ReadProber;
  /**
   * Run the storage probe after the modes (default true): gate --against's rounds turn it off, since their verdict
   * reads only the pace and the probe's seconds of reads would lengthen every round.
   */
  storageProbe?: boolean;
  /**
   * Runs one mode of the job; the real runMode unless a test passes a deterministic fake (the schedule is then one
   * launch a run).
   */
  modeRunner?: ModeRunner;
  /** Runs a launch of several modes; the real runLaunch unless a test passes a fake. */
  launchRunner?: LaunchRunner;
  /**
   * The CPU ledger the data source was given, so that its meter and states charge the same one as the sampler; absent:
   * each launch's own.
   */
  ledger?: CpuLedger;
  /** Let the job save its checkpoints and log to its trackers for real (profile --keep-outputs). */
  keepOutputs?: boolean;
  /**
   * profile --continue: the blocks run at the start of the real training run, the profile is written once they are
   * measured, and the job trains on to its end, unprofiled; the outcome's exit code is the job's (continue-run.ts).
   */
  continueRun?: boolean;
  /**
   * Start the job once for every mode and pass (default), or once a run
   * (profile --separate-launches): the schedule of a job that cannot switch.
   */
  separateLaunches?: boolean;
  /**
   * A job on several nodes, one CLI on each (src/profile/nodes/): every run starts once every node has set its cache
   * state, and the CLI that hosts the coordinator writes the merged profile. Absent: one node.
   */
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
  /**
   * A profile over several nodes that another node ended (exit NodeLost, or JobFailed where the job failed there): why.
   */
  nodeLost?: string;
  /** The data's endpoint failed or stopped answering after the profile was started (exit Environment...): why. */
  stopped?: string;
}
