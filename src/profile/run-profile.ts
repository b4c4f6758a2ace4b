import { tail } from './log-tail.js';
import { join } from 'node:path';
import { analyze } from '../analysis/split.js';
import { poolPasses, type ScheduledRun } from '../analysis/pool-passes.js';
import { workersApplied } from '../analysis/workers-applied.js';
import { localNode } from '../analysis/merge-nodes.js';
import { MIN_STOP_BLOCKS } from '../analysis/stopping.js';
import { ExitCode, UserError } from '../errors.js';
import { ENV, type Mode } from '../schema/events.js';
import { PROFILE_SCHEMA_VERSION, type ModeResult, type Profile } from '../schema/profile.js';
import { listDataset, type Dataset } from '../system/dataset/dataset.js';
import { hostFacts } from '../system/probes/host.js';
import { pauseReclaimers, reclaimingDamonSchemes, type PausedReclaimers } from '../system/cgroups/damon.js';
import { fileSystemWarnings } from '../system/dataset/file-systems.js';
import { CAPABILITY_TEXT } from '../system/probes/capability-text.js';
import { createJobCgroup, wrapCommand } from '../system/cgroups/cgroups.js';
import { startGpuSampler, type GpuSampler } from '../system/probes/gpu.js';
import { withCpus } from '../system/cgroups/affinity.js';
import { TOOL_NAME, TOOL_VERSION } from '../version.js';
import { sizeHistogram } from '../analysis/size-histogram.js';
import { artefactsDir, writeProfile } from '../store/profile-store.js';
import { storageProbe, type ReadProber } from './storage-probe.js';
import { runMode, type ModeProgress, type ModeRunInput } from './run-mode.js';
import type { CacheState } from './cache-states/cache-state.js';
import { PartialCacheState } from './cache-states/partial-cache-state.js';
import { probeShare, proveProbe, residentSubset, stageSecPerSample } from './overlap-probe.js';
import { Interrupts } from './interrupts.js';
import { CACHE_STATE_SETTINGS, DEFAULT_PASSES, SUPERVISION } from './run-defaults.js';
import { assertRunnable } from './preflight.js';

/** Seconds a job may run before its first iteration when the caller does not say (the CLI's 5m). */
export const DEFAULT_FIRST_ITERATION_TIMEOUT_SEC = SUPERVISION.firstIterationTimeoutSec;

/** Everything a profile run needs, already parsed and validated. */
export interface ProfileRunInput {
  /** The job's command. */
  argv: string[];
  /** Working folder of the job. */
  cwd: string;
  /** The CLI's environment: the job inherits it; its PATH finds taskset, its DSA_CGROUP_PARENT names a delegated cgroup. */
  env: NodeJS.ProcessEnv;
  /** Name of the job in the profile and its file name. */
  jobName: string;
  /** The dataset's folders (--data), absolute. */
  dataRoots: string[];
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
  /** Page-cache control of the modes (PageCacheState; FakeCacheState in tests). */
  cacheState: CacheState;
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
  /** Run the overlap probe after the modes (profile --overlap). */
  overlapProbe?: boolean;
  /** nvidia-smi command, or null to skip GPU sampling. */
  nvidiaSmi: string | null;
  /** Reads of the storage probe after the modes; the real ones unless a test passes its own. */
  readProber?: ReadProber;
  /** Runs one mode of the job; the real runMode unless a test passes a deterministic fake. */
  modeRunner?: (input: ModeRunInput) => Promise<ModeResult>;
}

export interface ProfileRunHooks {
  /** A run starts: a mode name, or cached-<n>cpu in a CPU sweep. */
  onModeStart?: (label: string) => void;
  /** Called about every poll with the progress of the run. */
  onProgress?: (progress: ModeProgress) => void;
  /** A run ended, with its result. */
  onModeDone?: (result: ModeResult) => void;
  /** Something limits what the profile can prove; said as soon as it is known. */
  onWarning?: (message: string) => void;
  /** Registers a SIGINT/SIGTERM handler; returns its remover. */
  onSignal: (handler: () => void) => () => void;
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
}

/**
 * Runs the requested modes one after another and writes the profile after
 * each, so a crash or an interrupt leaves every measured mode saved.
 */
export async function runProfile(input: ProfileRunInput, hooks: ProfileRunHooks): Promise<ProfileRunOutcome> {
  assertRunnable(input);
  // A proactive reclaimer evicts the warmed dataset under the cached mode's feet and costs CPU as it
  // scans: paused from before the walk to the end, so the whole profile sees one state of the machine,
  // where this process may (root), unless asked to keep it.
  const reclaimers = reclaimingDamonSchemes();
  const paused = reclaimers.length > 0 && input.pauseReclaim !== false ? pauseReclaimers() : null;
  try {
    return await profileModes(input, hooks, reclaimers, paused);
  } finally {
    paused?.restore();
  }
}

async function profileModes(
  input: ProfileRunInput,
  hooks: ProfileRunHooks,
  reclaimers: string[],
  paused: PausedReclaimers | null,
): Promise<ProfileRunOutcome> {
  const dataset = await listDataset(input.dataRoots);
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    hooks.onWarning?.(message);
  };
  if (paused && paused.paused.length > 0) {
    warn(
      `${paused.paused.join(' and ')} (DAMON pageout of idle memory, the page cache included) paused while profiling, so its pageout does not take the warmed files (each mode's state proof says whether its state held); ` +
        'turned back on when the profile ends, by a guardian process if this one is killed. Its pageout also takes the job\'s own idle pages ' +
        '(the libraries its loader workers map), so the job may run at another pace where it runs: --keep-reclaim measures with it running',
    );
  }
  if (reclaimers.length > 0 && (paused === null || paused.failures.length > 0)) {
    const why = paused ? ` (could not pause: ${paused.failures.join('; ')})` : ' (--keep-reclaim)';
    warn(`${reclaimers.join('; ')}${why}: ${CAPABILITY_TEXT['no-proactive-reclaim'].impact}; ${CAPABILITY_TEXT['no-proactive-reclaim'].fix}`);
  }

  if (!dataset.fitsInMemory && input.modes.includes('cached')) {
    warn(
      dataset.memoryBudgetBytes === null
        ? 'the memory available to the page cache could not be read (/proc/meminfo): the cached mode cannot be proven'
        : `the dataset (${(dataset.bytes / 2 ** 30).toFixed(2)} GiB) does not fit in the memory budget of ${(dataset.memoryBudgetBytes / 2 ** 30).toFixed(2)} GiB ` +
            `(${dataset.memoryBudgetSource ?? 'MemAvailable'}): the cached mode runs on a resident random subset, which the job must sample from (DSA_SUBSET_FILE, docs/protocol.md)`,
    );
  }
  // tmpfs, network and FUSE file systems keep a cache mode from being proven: said before anything runs.
  for (const warning of fileSystemWarnings(dataset.fileSystems)) warn(warning);
  const passes = Math.max(1, Math.round(input.passes ?? DEFAULT_PASSES));
  if (passes === 1 && input.modes.length > 1) {
    warn("one run per mode (--single-pass): the intervals hold the noise within each run, not a drift of the machine's pace between runs");
  }
  const host = await hostFacts({ nvidiaSmi: input.nvidiaSmi ?? undefined });
  const profile: Profile = {
    schemaVersion: PROFILE_SCHEMA_VERSION,
    tool: { name: TOOL_NAME, version: TOOL_VERSION },
    createdAt: new Date().toISOString(),
    status: 'partial',
    jobName: input.jobName,
    command: input.argv,
    options: {
      data: input.dataRoots,
      precision: input.precision,
      maxIterations: input.maxIterations,
      timeoutSec: input.timeoutSec,
      storageBwBytesPerSec: input.storageBwBytesPerSec,
      dropCaches: input.dropCaches,
      modes: input.modes,
      passes,
    },
    host,
    nodes: [localNode(host, [])],
    dataset: datasetFacts(dataset),
    modes: {},
    analysis: null,
    warnings,
  };

  const throttle = input.storageBwBytesPerSec ? await createThrottle(dataset, input.storageBwBytesPerSec, input.env.DSA_CGROUP_PARENT) : null;
  const gpu: GpuSampler | null = input.nvidiaSmi && host.gpus.length > 0 ? await startGpuSampler({ command: input.nvidiaSmi, intervalMs: input.pollMs }) : null;
  const interrupts = new Interrupts(hooks.onSignal);

  let exitCode = ExitCode.Ok;
  let failureTail: string | null = null;
  /** Runs the job once, as `mode`, under `cacheState`; the cold mode and the probe under the throttle. */
  const runOnce = async (mode: Mode, label: string, argv: string[], cacheState: CacheState, share = 1, numWorkers?: number): Promise<ModeResult> => {
    hooks.onModeStart?.(label);
    const budget = runBudget(input, share);
    const result = await (input.modeRunner ?? runMode)({
      mode,
      argv,
      cwd: input.cwd,
      env: input.env,
      dataset,
      modeDir: join(artefactsDir(input.outFile), label),
      ...budget,
      timeoutSec: input.timeoutSec,
      firstIterationTimeoutSec: input.firstIterationTimeoutSec ?? DEFAULT_FIRST_ITERATION_TIMEOUT_SEC,
      stopGraceSec: input.stopGraceSec,
      killGraceSec: input.killGraceSec,
      sync: input.sync,
      pollMs: input.pollMs,
      wrapArgv: (a) => (mode === 'cold' && throttle ? wrapCommand(throttle.procsFiles, a) : a),
      cacheState,
      ...(numWorkers !== undefined ? { numWorkers } : {}),
      gpu: gpu ?? undefined,
      onProgress: hooks.onProgress,
      onJobStarted: (job) => interrupts.attach(job),
      interrupted: () => interrupts.interrupted,
    });
    interrupts.detach();
    // The job ran here: this node's rank is the one its ranks reported (merge-nodes.ts).
    if (result.ranks.length > 0) profile.nodes = [localNode(host, result.ranks)];
    return result;
  };

  const scheduled: ScheduledRun[] = [];
  let workersRefused = false;
  try {
    for (const run of planRuns(input, passes)) {
      if (interrupts.interrupted) break;
      if (run.workers !== null && workersRefused) continue;
      const { mode } = run;
      const affinity = run.cpuCount === null ? null : withCpus(run.cpuCount, input.argv, input.env.PATH);
      const result = await runOnce(mode, run.label, affinity?.argv ?? input.argv, input.cacheState, run.budgetShare, run.workers ?? undefined);
      result.cpus = affinity?.cpus ?? null;
      if (run.workers !== null && result.status === 'ok' && !workersApplied(result, run.workers)) {
        // Not faked: a count the job did not run is no point of the sweep.
        workersRefused = true;
        warn(
          `workers sweep skipped: the job did not apply ${ENV.numWorkers}=${run.workers} (its start event reports ${result.ranks.map((r) => r.workers ?? 'no').join(', ')} workers and no script setting); ` +
            'only a torch DataLoader seen by the zero-code hook, or the emulated job, can change its workers; the manual API and the event protocol cannot',
        );
      } else if (run.cpuCount === null) {
        scheduled.push({ label: run.label, result, ...(run.workers !== null ? { group: `workers-${run.workers}` } : {}) });
        const pooled = poolPasses(scheduled);
        profile.modes = pooled.modes;
        if (pooled.groups.size > 0) profile.workersSweep = [...pooled.groups.values()];
        profile.analysis = analyze(profile.modes, { cpus: profile.host.cpus });
      } else {
        (profile.cpuSweep ??= []).push(result);
      }
      writeProfile(input.outFile, profile);
      hooks.onModeDone?.(result);
      if (result.status === 'interrupted') {
        exitCode = ExitCode.Interrupted;
        break;
      }
      if (result.status === 'failed') {
        exitCode = ExitCode.JobFailed;
        failureTail = tail(result.logs.stderr, 20) || tail(result.logs.stdout, 20);
        break;
      }
    }
    if (input.overlapProbe && exitCode === ExitCode.Ok && !interrupts.interrupted) {
      const probe = await overlapProbe(profile, dataset, input, runOnce, warn);
      if (probe) {
        profile.overlapProbe = probe;
        writeProfile(input.outFile, profile);
        hooks.onModeDone?.(probe);
        // A failed probe leaves the three modes whole: it is reported, not fatal.
        if (probe.status === 'failed') warn(`the overlap probe failed (${probe.stopReason}); its output is in ${probe.logs.stderr}`);
      }
    }
    if (exitCode === ExitCode.Ok && !interrupts.interrupted) {
      // A probe that cannot read is reported, never fatal: the modes are measured and saved.
      const probe = await storageProbe(profile, dataset.files, input.readProber).catch((error: unknown) => {
        warn(`the storage read probe failed (${error instanceof Error ? error.message : String(error)}); the what-if keeps the cold mode's read rate as a lower bound`);
        return null;
      });
      if (probe) {
        profile.storageProbe = probe;
        if (!probe.proven) warn(`the storage read probe is ${probe.reason}; the what-if keeps the cold mode's read rate as a lower bound`);
      }
    }
    if (interrupts.interrupted && exitCode === ExitCode.Ok) exitCode = ExitCode.Interrupted;
    profile.status = exitCode === ExitCode.Ok ? 'complete' : 'partial';
    writeProfile(input.outFile, profile);
  } finally {
    interrupts.dispose();
    await gpu?.stop();
    await throttle?.remove();
  }
  return { profile, path: input.outFile, exitCode, failureTail };
}

/** Folder and progress label of the overlap probe. */
const PROBE_LABEL = 'cold-partial';

/**
 * The overlap probe: plans the resident share from the cached and cold modes
 * and runs the cold mode with that share held in the page cache. Null, with a
 * warning, when there is nothing to probe.
 */
async function overlapProbe(
  profile: Profile,
  dataset: Dataset,
  input: ProfileRunInput,
  runOnce: (mode: Mode, label: string, argv: string[], cacheState: CacheState) => Promise<ModeResult>,
  warn: (message: string) => void,
): Promise<NonNullable<Profile['overlapProbe']> | null> {
  const stages = stageSecPerSample(profile.modes.cached, profile.modes.cold);
  if (!stages) {
    warn('overlap probe not run: it needs the cached and cold modes to have completed');
    return null;
  }
  const share = probeShare(stages.fetch, stages.prep);
  if (share === null) {
    warn('overlap probe not run: reads take no longer than pre-processing per sample, so how they overlap does not limit the job');
    return null;
  }
  const resident = residentSubset(dataset.files, share);
  const heldShare = resident.reduce((sum, f) => sum + f.bytes, 0) / Math.max(1, dataset.bytes);
  const cacheState = new PartialCacheState(resident, CACHE_STATE_SETTINGS);
  const result = await runOnce('cold', PROBE_LABEL, input.argv, cacheState);
  return { ...result, state: proveProbe(result.state, heldShare), residentShare: heldShare };
}

/** Fewest blocks before precision may stop one of several pooled runs (t with 4 df is 2.78, against 2.26 with 9). */
const MIN_POOLED_RUN_BLOCKS = 5;

/** One run of the job: a mode, at all CPUs or (CPU sweep) at a few, with the script's loader workers or (workers sweep) others. */
export interface PlannedRun {
  mode: Mode;
  /** CPUs to restrict the job to, or null for all. */
  cpuCount: number | null;
  /** Loader workers to ask the job for (DSA_NUM_WORKERS), or null for the script's own. */
  workers: number | null;
  /** Name of the run's folder and progress lines. */
  label: string;
  /** Share of the mode's iteration budget this run gets (1 / passes). */
  budgetShare: number;
}

/**
 * The requested modes, `passes` times, every other pass in reverse order so
 * that each mode's runs sit symmetrically around the middle of the schedule
 * (a steady drift then cancels from their mean). The workers sweep's runs sit
 * right after the cached mode in each pass (the end, without it), so they are
 * mirrored too; the cached mode at each CPU count of the CPU sweep comes last.
 */
export function planRuns(input: Pick<ProfileRunInput, 'modes' | 'cpuSweep' | 'workersSweep'>, passes: number): PlannedRun[] {
  type Step = { mode: Mode; workers: number | null };
  const steps: Step[] = input.modes.map((mode) => ({ mode, workers: null }));
  const sweep: Step[] = (input.workersSweep ?? []).map((workers) => ({ mode: 'cached', workers }));
  const at = input.modes.indexOf('cached');
  steps.splice(at === -1 ? steps.length : at + 1, 0, ...sweep);
  const runs: PlannedRun[] = [];
  for (let pass = 1; pass <= passes; pass++) {
    for (const { mode, workers } of pass % 2 === 1 ? steps : [...steps].reverse()) {
      const base = workers === null ? mode : `${mode}-${workers}workers`;
      runs.push({ mode, cpuCount: null, workers, label: pass === 1 ? base : `${base}-${pass}`, budgetShare: 1 / passes });
    }
  }
  for (const count of input.cpuSweep ?? []) runs.push({ mode: 'cached', cpuCount: count, workers: null, label: `cached-${count}cpu`, budgetShare: 1 });
  return runs;
}


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

async function createThrottle(dataset: Dataset, bytesPerSec: number, cgroupParent: string | undefined) {
  if (!dataset.device) {
    throw new UserError(
      `--storage-bw: the dataset is not on a block device that can be throttled (tmpfs, overlay or network file system); put it on a local disk or omit --storage-bw`,
      ExitCode.Environment,
    );
  }
  return createJobCgroup({ name: `${process.pid}`, readBpsDevice: { device: dataset.device, bytesPerSec }, v2Parent: cgroupParent });
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
  };
}

