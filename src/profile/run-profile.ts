import { join } from 'node:path';
import { localNode } from '../analysis/merge-nodes.js';
import { MIN_STOP_BLOCKS } from '../analysis/stopping.js';
import { ExitCode } from '../errors.js';
import { ENV, type Mode } from '../schema/events.js';
import { PROFILE_SCHEMA_VERSION, type ModeResult, type Profile } from '../schema/profile.js';
import type { Dataset } from '../system/dataset/dataset.js';
import { hostFacts } from '../system/probes/host.js';
import { startGpuSampler, type GpuSampler } from '../system/probes/gpu.js';
import { withCpus } from '../system/cgroups/affinity.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import { sizeHistogram } from '../analysis/size-histogram.js';
import { artefactsDir } from '../store/profile-files.js';
import type { ArtifactSink } from '../store/artifact-sink.js';
import { commandWithoutSecrets } from '../store/redact.js';
import { ProfileBook } from './profile-book.js';
import { RunRegistration } from './run-registry.js';
import { NodeRuns, type NodesInput, type ScheduleOptions } from './nodes/node-runs.js';
import { NodeLostError } from './nodes/node-link.js';
import { storageProbe, type ReadProber } from './storage-probe.js';
import { runMode, type ModeProgress } from './run-mode.js';
import {
  failureTail,
  jobRunner,
  launchRunner,
  pauseReclaim,
  runVerdict,
  sharedRunSettings,
  startThrottle,
  type LaunchRunner,
  type ModeRunner,
} from './run-setup.js';
import { runLaunch, type LaunchBlock } from './run-launch.js';
import { outputsEnv, outputsNote } from './job-outputs.js';
import type { CpuLedger } from '../system/kernel/cpu-ledger.js';
import {
  iterationsRun,
  launchPlan,
  profileCost,
  type LaunchPlan,
  type PlannedRun,
  type ScheduleRan,
} from './launch-plan.js';
export { planRuns, type PlannedRun } from './launch-plan.js';
import type { CacheState } from './cache-states/cache-state.js';
import type { DataSource, DownloadProgress } from './data-sources/data-source.js';
import { EndpointError } from '../system/network/remote-objects.js';
import { isAbort } from '../system/network/deadlines.js';
import { networkRate, stoppedBy } from './run-outcome.js';
import { probeShare, proveProbe, residentSubset, stageSecPerSample } from './overlap-probe.js';
import { Interrupts } from './interrupts.js';
import { DEFAULT_PASSES, SUPERVISION } from './run-defaults.js';
import { assertRunnable } from './preflight.js';
import { PROFILE_RUN_TEXT } from './run-text.js';
import { mkdirSync } from 'node:fs';
import type { RunAs } from './run-as.js';
import { handOver } from '../system/kernel/hand-over.js';
import type { JobExit } from './supervisor.js';
import { assertRidable, jobExitCode, rodeRun, trainOn, type Continuing } from './continue-run.js';

/** Seconds a job may run before its first iteration when the caller does not say (the CLI's 5m). */
export const DEFAULT_FIRST_ITERATION_TIMEOUT_SEC = SUPERVISION.firstIterationTimeoutSec;

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
   * Runs of each mode (default 2): the modes in order, then in reverse, each
   * run with half the iteration budget, so a steady drift of the machine's
   * pace cancels (docs/method.md, "Drift"). 1: one run of each mode.
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
   * A job on several nodes, one CLI on each (src/profile/nodes/): every run
   * starts once every node has set its cache state, and the CLI that hosts
   * the coordinator writes the merged profile. Absent: one node.
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

/**
 * Runs the requested modes, as blocks of one launch of the job where it
 * switches modes (launch-plan.ts) or one launch a run, and writes the profile
 * after each launch's blocks and each run, so a crash or an interrupt leaves
 * every measured mode saved (a crash inside a launch ends it: the blocks it
 * measured are kept).
 */
export async function runProfile(input: ProfileRunInput, hooks: ProfileRunHooks): Promise<ProfileRunOutcome> {
  assertRunnable(input);
  // Entered once the data is listed (profileModes); released whatever ended the run.
  const registration = input.registry
    ? new RunRegistration(input.registry.dir, input.outFile, input.registry.allowConcurrent)
    : null;
  // Paused from before the walk to the end, so the whole profile sees one state of the machine.
  const reclaim = pauseReclaim(input.pauseReclaim !== false, 'profile', input.env);
  try {
    // --continue: once the blocks are measured, the machine is the job's again (reclaim back on, the registry freed).
    const letGo = () => {
      reclaim.restore();
      registration?.release();
    };
    return await profileModes(input, hooks, reclaim.warnings, registration, letGo);
  } finally {
    reclaim.restore();
    registration?.release();
    // The source's proxy and cache (remote data) outlive no profile, whatever ended it.
    await input.dataSource.close().catch(() => undefined);
  }
}

/** One run of the job as the profile asks for it; the shared settings are added by the run set-up. */
interface ProfileRunRequest {
  mode: Mode;
  /** Folder name and progress label. */
  label: string;
  argv: string[];
  cacheState: CacheState;
  /** Share of the mode's iteration budget (default 1). */
  budgetShare?: number;
  numWorkers?: number;
}

/** Runs the job once for the profile. */
type RunOnce = (request: ProfileRunRequest) => Promise<ModeResult>;

/** Starts the job once for several blocks; `label` names the launch's folder. */
type LaunchOnce = (blocks: LaunchBlock[], label: string) => Promise<import('./run-launch.js').LaunchOutcome>;

/** What the steps of a profile share while it is measured. */
interface ProfileSteps {
  input: ProfileRunInput;
  hooks: ProfileRunHooks;
  /** This node's profile, written after each step. */
  book: ProfileBook;
  /** The other nodes of a multi-node profile, kept in step; null on one node. */
  nodes: NodeRuns | null;
  dataset: Dataset;
  runOnce: RunOnce;
  launchOnce: LaunchOnce;
  interrupts: Interrupts;
  warn: (message: string) => void;
}

/** How the runs ended. */
interface RunsEnd {
  /** Launches of the job the schedule made. */
  launches: number;
  /** Iterations the job ran in them (the most of any rank in each launch). */
  jobIterations: number;
  /** False when the job did not offer to switch modes and each block got a launch of its own. */
  switched?: boolean;
  exitCode: ExitCode;
  failureTail: string | null;
  /** Why another node ended this node's runs (exit NodeLost, or JobFailed for a job that failed there), else absent. */
  nodeLost?: string;
  /** profile --continue: the job training on after its blocks, and what they cost it. */
  continuing?: Continuing;
  /** profile --continue, a job that ended before its blocks did: how it ended. */
  jobExit?: Pick<JobExit, 'exitCode' | 'signal'>;
}

async function profileModes(
  input: ProfileRunInput,
  hooks: ProfileRunHooks,
  reclaimWarnings: string[],
  registration: RunRegistration | null,
  letGo: () => void,
): Promise<ProfileRunOutcome> {
  const dataset = await input.dataSource.list();
  // Another profile on this machine is refused here, before anything is measured or changed.
  registration?.enter();
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    hooks.onWarning?.(message);
  };
  for (const warning of reclaimWarnings) warn(warning);
  // What keeps a mode from being proven on this data (a dataset that does not fit, tmpfs, NFS): said before anything
  // runs.
  for (const warning of input.dataSource.warnings(dataset, input.modes)) warn(warning);
  const passes = Math.max(1, Math.round(input.passes ?? DEFAULT_PASSES));
  if (passes === 1 && input.modes.length > 1) {
    warn(PROFILE_RUN_TEXT.singlePass);
  }
  const host = await hostFacts({ nvidiaSmi: input.nvidiaSmi ?? undefined });
  // Each save first names the profiles that ran beside this one (where --allow-concurrent let one).
  const book = new ProfileBook(newProfile(input, passes, host, dataset, warnings), input.outFile, input.sink, () =>
    registration?.noteNeighbours(warnings),
  );
  const profile = book.profile;
  // Every node arrives before anything is throttled or run: a node that never comes costs no run.
  const nodes = input.nodes
    ? await NodeRuns.open(input.nodes, book, { ...scheduleOf(input), passes }, input.sink)
    : null;
  const interrupts = new Interrupts(hooks.onSignal);
  // A download before a mode stops at the user's interrupt, and says how it comes on.
  input.dataSource.bindRun?.({
    signal: interrupts.signal,
    ...(hooks.onDownload ? { onDownload: hooks.onDownload } : {}),
    rateBytesPerSec: () => networkRate(profile),
  });
  const throttle = await startThrottle(
    input.dataSource,
    dataset,
    input.storageBwBytesPerSec,
    `${process.pid}`,
    input.env,
  ).catch((error: unknown) => {
    nodes?.link.abort(errorText(error));
    throw error;
  });
  const gpu: GpuSampler | null =
    input.nvidiaSmi && host.gpus.length > 0
      ? await startGpuSampler({ command: input.nvidiaSmi, intervalMs: input.pollMs })
      : null;
  if (nodes) {
    // The job spans the nodes: where one is gone, this node's ranks wait on it in vain.
    nodes.link.onLost((message) => {
      warn(message);
      interrupts.stop();
    });
    interrupts.onInterrupt(() => nodes.link.abort(`node ${host.hostname} was interrupted`));
  }
  // The job's outputs: its checkpoints to scratch files, its trackers off or to the profile's scratch folder.
  const scratchDir = join(artefactsDir(input.outFile), 'scratch');
  if (input.runAs) {
    // The job, run as the user, makes its trackers' folders in here.
    mkdirSync(scratchDir, { recursive: true });
    handOver([artefactsDir(input.outFile), scratchDir], input.runAs, { recursive: false });
  }
  // --continue: the run's own saves are real; a synthetic block's still go to scratch (the hook diverts them).
  const ownOutputs = input.keepOutputs === true || input.continueRun === true;
  profile.outputs = input.continueRun ? PROFILE_RUN_TEXT.continueOutputs : outputsNote(ownOutputs, scratchDir);
  hooks.onNote?.(profile.outputs);
  const jobInput = {
    ...input,
    env: { ...input.env, ...outputsEnv(ownOutputs, scratchDir), ...(nodes ? nodes.jobEnv : {}) },
  };
  const start = jobRunner(
    sharedRunSettings(jobInput, dataset, gpu ?? undefined),
    input.modeRunner ?? runMode,
    interrupts,
  );
  // The cold mode and the probe read storage under the throttle.
  const runOnce: RunOnce = async ({ mode, label, argv, cacheState, budgetShare = 1, numWorkers }) => {
    hooks.onModeStart?.(label);
    const result = await start({
      mode,
      argv,
      modeDir: join(artefactsDir(input.outFile), label),
      ...runBudget(input, budgetShare),
      wrapArgv: (a) => (mode === 'cold' && throttle ? throttle.wrap(a) : a),
      cacheState,
      ...(numWorkers !== undefined ? { numWorkers } : {}),
      ...(nodes ? { beforeJobStart: () => nodes.barrier(label) } : {}),
      ...(input.ledger ? { ledger: input.ledger } : {}),
      onProgress: hooks.onProgress,
    });
    // The job ran here: this node's rank is the one its ranks reported (merge-nodes.ts).
    if (result.ranks.length > 0) profile.nodes = [localNode(host, result.ranks)];
    return result;
  };
  const launch = launchRunner(
    sharedRunSettings(jobInput, dataset, gpu ?? undefined),
    input.launchRunner ?? runLaunch,
    interrupts,
  );
  const launchOnce: LaunchOnce = async (blocks, label) => {
    hooks.onModeStart?.(blocks[0].label);
    const outcome = await launch({
      argv: input.argv,
      modeDir: join(artefactsDir(input.outFile), label),
      // The launch reads storage under the throttle where one of its blocks is cold.
      wrapArgv: (a) => (throttle && blocks.some((b) => b.mode === 'cold') ? throttle.wrap(a) : a),
      blocks,
      // Every node has set its first block's state before any rank starts; the later blocks wait in the job (DSA_NODES).
      ...(nodes ? { beforeJobStart: () => nodes.barrier(label) } : {}),
      ...(input.ledger ? { ledger: input.ledger } : {}),
      onBlockStart: (block) => hooks.onModeStart?.(block.label, true),
      onProgress: hooks.onProgress,
      ...(input.continueRun ? { continueRun: true } : {}),
    });
    const ranks = outcome.results.find((result) => result.ranks.length > 0)?.ranks;
    if (ranks) profile.nodes = [localNode(host, ranks)];
    return outcome;
  };
  const steps: ProfileSteps = { input, hooks, book, nodes, dataset, runOnce, launchOnce, interrupts, warn };
  const profileStartedAt = Date.now();
  try {
    const plan = launchPlan(
      { ...input, fakesSingleRuns: input.modeRunner !== undefined && input.launchRunner === undefined },
      dataset,
      passes,
    );
    if (input.continueRun) assertRidable(plan);
    const end = await runPlan(steps, plan);
    let exitCode = end.exitCode;
    let nodeLost = end.nodeLost;
    if (input.overlapProbe && exitCode === ExitCode.Ok && !interrupts.interrupted) await overlapStep(steps);
    if (exitCode === ExitCode.Ok && !interrupts.interrupted) await storageProbeStep(steps);
    // The probe's launch is part of the price.
    const probe = profile.overlapProbe ? [profile.overlapProbe] : [];
    const probeIterations = probe.reduce((sum, run) => sum + iterationsRun(run), 0);
    const ran = {
      ...end.ran,
      launches: end.ran.launches + probe.length,
      jobIterations: end.ran.jobIterations + probeIterations,
    };
    profile.cost = profileCost([...book.results(), ...probe], ran, (Date.now() - profileStartedAt) / 1000);
    // Every node ran the same schedule and launches: the merged profile says what it cost as this node measured it.
    if (nodes?.merged) nodes.merged.profile.cost = profile.cost;
    if (end.continuing) profile.cost.continued = end.continuing.cost;
    if (nodes && exitCode === ExitCode.Ok && !interrupts.interrupted) {
      nodeLost = await nodes.finish(profile.storageProbe ?? null).then(
        () => undefined,
        (error: unknown) => lostOrThrow(error),
      );
      if (nodeLost !== undefined) exitCode = ExitCode.NodeLost;
    }
    if (interrupts.interrupted && exitCode === ExitCode.Ok) exitCode = ExitCode.Interrupted;
    for (const written of booksOf(book, nodes)) {
      written.profile.status = exitCode === ExitCode.Ok ? 'complete' : 'partial';
      written.save();
    }
    // --continue: the profile is written; the job trains on to its end, and its exit code is this command's.
    if (end.continuing) {
      // The GPU sampler's nvidia-smi too: nothing of the profiler stays beside the run.
      const release = () => {
        letGo();
        void gpu?.stop();
      };
      exitCode = await trainOn(book, end.continuing, { interrupts, letGo: release, note: hooks.onNote });
    } else if (input.continueRun && end.jobExit) exitCode = jobExitCode(end.jobExit);
    const shown = nodes?.merged ?? book;
    return {
      profile: shown.profile,
      path: shown.path,
      exitCode,
      failureTail: end.failureTail,
      ...(nodeLost !== undefined ? { nodeLost } : {}),
    };
  } catch (error) {
    // The other nodes hear why at once, not when their wait for this one times out.
    nodes?.link.abort(errorText(error));
    const stopped = stoppedBy(error, interrupts.interrupted);
    if (!stopped) throw error;
    // The modes measured before stay saved, as partial.
    for (const written of booksOf(book, nodes)) written.save();
    const shown = nodes?.merged ?? book;
    return { profile: shown.profile, path: shown.path, failureTail: null, ...stopped };
  } finally {
    nodes?.link.abort(`node ${host.hostname} ended its profile`);
    interrupts.dispose();
    await gpu?.stop();
    await throttle?.remove();
  }
}

/** The options that fix the schedule, which every node of a profile must share. */
function scheduleOf(input: ProfileRunInput): Omit<ScheduleOptions, 'passes'> {
  return {
    modes: input.modes,
    precision: input.precision,
    minIterations: input.minIterations,
    maxIterations: input.maxIterations,
    cpuSweep: input.cpuSweep ?? [],
    workersSweep: input.workersSweep ?? [],
  };
}

/** Every profile this CLI writes: its own, and on the coordinator's node the merged one. */
function booksOf(book: ProfileBook, nodes: NodeRuns | null): ProfileBook[] {
  return nodes?.merged ? [book, nodes.merged] : [book];
}

/** A lost node's message, for the outcome; any other error goes on up. */
function lostOrThrow(error: unknown): string {
  if (error instanceof NodeLostError) return error.message;
  throw error;
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}

/** The profile before its first run: options, host and dataset facts, no mode yet. */
function newProfile(
  input: ProfileRunInput,
  passes: number,
  host: Profile['host'],
  dataset: Dataset,
  warnings: string[],
): Profile {
  return {
    schemaVersion: PROFILE_SCHEMA_VERSION,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    createdAt: new Date().toISOString(),
    status: 'partial',
    jobName: input.jobName,
    // Credentials in URLs and environment assignments are never written, --redact or not.
    command: commandWithoutSecrets(input.argv),
    options: {
      data: input.dataRoots,
      ...(input.remote ? { remote: input.remote } : {}),
      precision: input.precision,
      maxIterations: input.maxIterations,
      timeoutSec: input.timeoutSec,
      storageBwBytesPerSec: input.storageBwBytesPerSec,
      dropCaches: input.dropCaches,
      modes: input.modes,
      passes,
    },
    // The data as one value, recorded by the source that listed it (the old fields stay, for older readers).
    ...(dataset.source ? { source: dataset.source } : {}),
    host,
    nodes: [localNode(host, [])],
    dataset: datasetFacts(dataset),
    modes: {},
    analysis: null,
    warnings,
  };
}

/**
 * The planned runs in order (planRuns), each saved as soon as it ends: a
 * mode's runs pooled and analysed, a CPU-sweep run kept apart. A workers
 * count the job did not apply ends the workers sweep; an interrupt or a
 * failed job ends the schedule. On several nodes every node follows the
 * verdict of the merged result, so their schedules stay the same.
 */
async function runSchedule(
  { input, hooks, book, nodes, runOnce, interrupts, warn }: ProfileSteps,
  runs: readonly PlannedRun[],
): Promise<RunsEnd> {
  let workersRefused = false;
  let launches = 0;
  let jobIterations = 0;
  for (const run of runs) {
    if (interrupts.interrupted) break;
    if (run.workers !== null && workersRefused) continue;
    const affinity = run.cpuCount === null ? null : withCpus(run.cpuCount, input.argv, input.env.PATH);
    let result: ModeResult;
    try {
      result = await runOnce({
        mode: run.mode,
        label: run.label,
        argv: affinity?.argv ?? input.argv,
        cacheState: input.dataSource.modeState,
        budgetShare: run.budgetShare,
        ...(run.workers !== null ? { numWorkers: run.workers } : {}),
      });
    } catch (error) {
      return nodeEnd(lostOrThrow(error), interrupts, launches, jobIterations);
    }
    launches++;
    jobIterations += iterationsRun(result);
    result.cpus = affinity?.cpus ?? null;
    const own = runVerdict(result, run.workers);
    if (own.workersNotApplied === null) book.record(run, result);
    hooks.onModeDone?.(result);
    let verdict = own;
    if (nodes) {
      try {
        verdict = await nodes.settle(run, result, localNode(book.profile.host, result.ranks));
      } catch (error) {
        return nodeEnd(lostOrThrow(error), interrupts, launches, jobIterations);
      }
    }
    if (verdict.workersNotApplied !== null) {
      workersRefused = true;
      warn(PROFILE_RUN_TEXT.workersNotApplied(ENV.numWorkers, run.workers!, verdict.workersNotApplied));
      // The warning is part of the profile as saved now, not only at the next run.
      for (const written of booksOf(book, nodes)) written.save();
    }
    if (verdict.status === 'interrupted')
      return { launches, jobIterations, exitCode: ExitCode.Interrupted, failureTail: null };
    if (verdict.status === 'failed') {
      // The job failed on another node: the merged profile (the coordinator's) holds that node's run, a node's own does
      // not.
      if (own.status !== 'failed' && !nodes?.merged)
        return {
          launches,
          jobIterations,
          exitCode: ExitCode.JobFailed,
          failureTail: null,
          nodeLost: PROFILE_RUN_TEXT.failedElsewhere(run.label),
        };
      return {
        launches,
        jobIterations,
        exitCode: ExitCode.JobFailed,
        failureTail: own.status === 'failed' ? failureTail(result, FAILURE_TAIL_LINES) : null,
      };
    }
    // A stalled run (its data stopped coming, its job hung) ends the schedule as a failure does: the runs after it
    // would wait on the same source.
    if (verdict.stalled) return stalledEnd(result, launches, jobIterations);
  }
  return { launches, jobIterations, exitCode: ExitCode.Ok, failureTail: null };
}

/**
 * The modes as blocks of as few launches as the job allows: one, where it
 * switches modes; each block saved as soon as its launch ends. A job that
 * cannot switch runs its first block, and every other block gets a launch of
 * its own; a job that ends before the last block (its data ran out) is
 * launched again for the rest. A failed or interrupted block ends the schedule.
 */
async function runLaunchSchedule(steps: ProfileSteps, plan: LaunchPlan): Promise<RunsEnd> {
  const { input, hooks, book, launchOnce, interrupts, warn } = steps;
  let pending = plan.blocks;
  let launches = 0;
  let jobIterations = 0;
  let switchable = true;
  let stalled: ModeResult | undefined;
  while (pending.length > 0 && !interrupts.interrupted && stalled === undefined) {
    const batch = switchable ? pending : pending.slice(0, 1);
    launches++;
    const outcome = await launchOnce(
      batch.map((run) => ({
        mode: run.mode,
        label: run.label,
        cacheState: input.dataSource.modeState,
        ...runBudget(input, run.budgetShare),
      })),
      batch.length > 1 ? `launch-${launches}` : batch[0].label,
    );
    switchable &&= outcome.switchable;
    jobIterations += outcome.jobIterations;
    if (input.continueRun) return rodeRun(outcome, batch, { book, hooks, warn }, { launches, jobIterations });
    // Every block saved before the nodes settle them: a node lost meanwhile leaves this node's blocks kept.
    for (const [k, result] of outcome.results.entries()) {
      book.record(batch[k], result);
      hooks.onModeDone?.(result);
    }
    for (const [k, result] of outcome.results.entries()) {
      const ended = await blockEnd(steps, batch[k], result, { launches, jobIterations, switched: switchable });
      if (ended) return ended;
      // The blocks after a stalled one in the same launch are kept; no launch follows it.
      stalled ??= result.stalled ? result : undefined;
    }
    pending = pending.slice(outcome.results.length);
  }
  if (stalled) return { ...stalledEnd(stalled, launches, jobIterations), switched: switchable };
  return { launches, jobIterations, switched: switchable, exitCode: ExitCode.Ok, failureTail: null };
}

/**
 * The schedule's end after a block of a launch, or null to go on: where it failed or was interrupted, on this node
 * or (settled with the others, the merged profile filing every node's) on another.
 */
async function blockEnd(
  { nodes, book, interrupts }: ProfileSteps,
  run: PlannedRun,
  result: ModeResult,
  counts: Pick<RunsEnd, 'launches' | 'jobIterations' | 'switched'>,
): Promise<RunsEnd | null> {
  let status = result.status;
  if (nodes) {
    try {
      status = (await nodes.settle(run, result, localNode(book.profile.host, result.ranks))).status;
    } catch (error) {
      return { ...nodeEnd(lostOrThrow(error), interrupts, counts.launches, counts.jobIterations), ...counts };
    }
  }
  if (status === 'interrupted') return { ...counts, exitCode: ExitCode.Interrupted, failureTail: null };
  if (status !== 'failed') return null;
  // The job failed on another node: the merged profile (the coordinator's) holds that node's block, a node's own not.
  const elsewhere = result.status !== 'failed' && !nodes?.merged;
  return {
    ...counts,
    exitCode: ExitCode.JobFailed,
    failureTail: result.status === 'failed' ? failureTail(result, FAILURE_TAIL_LINES) : null,
    ...(elsewhere ? { nodeLost: PROFILE_RUN_TEXT.failedElsewhere(run.label) } : {}),
  };
}

/**
 * The plan's launches: the blocks of one launch (where planned), then the runs
 * launched one by one (the CPU sweep; every run for separate launches); and
 * how the schedule ran, for the profile's cost.
 */
async function runPlan(steps: ProfileSteps, plan: LaunchPlan): Promise<RunsEnd & { ran: ScheduleRan }> {
  const inLaunch = plan.blocks.length > 0 ? await runLaunchSchedule(steps, plan) : null;
  const alone =
    inLaunch === null ||
    (inLaunch.exitCode === ExitCode.Ok && !steps.interrupts.interrupted && !steps.input.continueRun)
      ? await runSchedule(steps, plan.runs)
      : null;
  const end: RunsEnd =
    alone && inLaunch
      ? {
          ...alone,
          launches: inLaunch.launches + alone.launches,
          jobIterations: inLaunch.jobIterations + alone.jobIterations,
        }
      : (alone ?? inLaunch)!;
  const notSwitched = inLaunch !== null && inLaunch.switched === false;
  if (notSwitched) steps.warn(PROFILE_RUN_TEXT.notSwitchable(inLaunch.launches, steps.nodes !== null));
  const ran: ScheduleRan = {
    schedule: plan.schedule === 'one-launch' && !notSwitched ? 'one-launch' : 'separate-launches',
    reason: notSwitched ? PROFILE_RUN_TEXT.separateNotSwitchable : plan.reason,
    launches: end.launches,
    jobIterations: end.jobIterations,
  };
  return { ...end, ran };
}

/** The schedule's end when another node is gone: interrupted where the user interrupted here first. */
function nodeEnd(message: string, interrupts: Interrupts, launches: number, jobIterations: number): RunsEnd {
  return interrupts.userInterrupted
    ? { launches, jobIterations, exitCode: ExitCode.Interrupted, failureTail: null }
    : { launches, jobIterations, exitCode: ExitCode.NodeLost, failureTail: null, nodeLost: message };
}

/** The schedule's end at a stalled run (analysis/stalls.ts): exit JobFailed, with the job's last lines. */
function stalledEnd(result: ModeResult, launches: number, jobIterations: number): RunsEnd {
  return {
    launches,
    jobIterations,
    exitCode: ExitCode.JobFailed,
    failureTail: failureTail(result, FAILURE_TAIL_LINES),
  };
}

/** Lines of a failed job's log shown when the profile stops. */
const FAILURE_TAIL_LINES = 20;

/**
 * The overlap probe after the modes, saved in the profile; a failed probe leaves the modes whole: reported, not fatal.
 */
async function overlapStep(steps: ProfileSteps): Promise<void> {
  const { hooks, book, warn } = steps;
  const probe = await overlapProbe(steps);
  if (!probe) return;
  book.profile.overlapProbe = probe;
  book.refreshLaterEpochs();
  book.save();
  hooks.onModeDone?.(probe);
  if (probe.status === 'failed') warn(PROFILE_RUN_TEXT.overlapProbeFailed(probe.stopReason, probe.logs.stderr));
}

/**
 * The storage read probe after the modes; one that cannot read is reported, never fatal: the modes are measured and
 * saved.
 */
async function storageProbeStep({ input, book, dataset, warn }: ProfileSteps): Promise<void> {
  const profile = book.profile;
  const probe = await storageProbe(profile, dataset.files, input.readProber ?? input.dataSource.readProber).catch(
    (error: unknown) => {
      // An endpoint that stopped answering ends the profile (what follows would wait on it too), as does Ctrl-C.
      if ((error instanceof EndpointError && error.stalled) || isAbort(error)) throw error;
      warn(PROFILE_RUN_TEXT.storageProbeFailed(error instanceof Error ? error.message : String(error)));
      return null;
    },
  );
  if (!probe) return;
  profile.storageProbe = probe;
  book.refreshLaterEpochs();
  if (!probe.proven) warn(PROFILE_RUN_TEXT.storageProbeUnproven(probe.reason));
}

/** Folder and progress label of the overlap probe. */
const PROBE_LABEL = 'cold-partial';

/**
 * The overlap probe: plans the resident share from the cached and cold modes
 * and runs the cold mode with that share held in the page cache. Null, with a
 * warning, when there is nothing to probe.
 */
async function overlapProbe({
  book: { profile },
  dataset,
  input,
  runOnce,
  warn,
}: ProfileSteps): Promise<NonNullable<Profile['overlapProbe']> | null> {
  const source = input.dataSource;
  if (!source.heldShareState) {
    warn(source.whyNot?.heldShare ?? PROFILE_RUN_TEXT.overlapProbeNoHeldShare);
    return null;
  }
  const stages = stageSecPerSample(profile.modes.cached, profile.modes.cold);
  if (!stages) {
    warn(PROFILE_RUN_TEXT.overlapProbeNeedsModes);
    return null;
  }
  const share = probeShare(stages.fetch, stages.prep);
  if (share === null) {
    warn(PROFILE_RUN_TEXT.overlapProbeMoot);
    return null;
  }
  const resident = residentSubset(dataset.files, share);
  const heldShare = resident.reduce((sum, f) => sum + f.bytes, 0) / Math.max(1, dataset.bytes);
  const cacheState = source.heldShareState(resident);
  const result = await runOnce({ mode: 'cold', label: PROBE_LABEL, argv: input.argv, cacheState });
  return { ...result, state: proveProbe(result.state, heldShare, source.fetchesFrom), residentShare: heldShare };
}

/** Fewest blocks before precision may stop one of several pooled runs (t with 4 df is 2.78, against 2.26 with 9). */
const MIN_POOLED_RUN_BLOCKS = 5;

/**
 * Iteration budget and precision target of one run that gets `share` of a
 * mode's budget: the iteration floor and ceiling scale with it, and the
 * precision target widens by 1/sqrt(share), so the pooled runs together reach
 * about the asked precision in the same total iterations as one run would.
 */
export function runBudget(
  input: Pick<ProfileRunInput, 'precision' | 'minIterations' | 'maxIterations'>,
  share: number,
): { precision: number; minIterations: number; maxIterations: number; minStopBlocks: number } {
  return {
    precision: input.precision / Math.sqrt(share),
    // The pooled runs together hold the blocks one run would need.
    minStopBlocks: Math.max(MIN_POOLED_RUN_BLOCKS, Math.ceil(MIN_STOP_BLOCKS * share)),
    minIterations: Math.max(1, Math.ceil(input.minIterations * share)),
    maxIterations: Math.max(1, Math.ceil(input.maxIterations * share)),
  };
}

function datasetFacts(dataset: Dataset): Profile['dataset'] {
  return {
    roots: dataset.roots,
    files: dataset.files.length,
    bytes: dataset.bytes,
    meanFileBytes: dataset.meanFileBytes,
    fileBytesQuantiles: dataset.fileBytesQuantiles,
    device: dataset.device,
    fitsInMemory: dataset.fitsInMemory,
    fileBytesHistogram: sizeHistogram(dataset.files.map((file) => file.bytes)),
    memoryBudgetBytes: dataset.memoryBudgetBytes,
    ...(dataset.memoryBudgetSource !== undefined ? { memoryBudgetSource: dataset.memoryBudgetSource } : {}),
    ...(dataset.remote ? { remote: dataset.remote } : {}),
    ...(dataset.mount ? { mount: dataset.mount } : {}),
  };
}
