// One launch of the job, measuring one mode or several in blocks (docs/method.md, "One launch"): each block's state is
// set while the job trains on in the previous mode, then the control file (DSA_CONTROL_FILE) names the new mode, which
// the job takes at an iteration boundary and acknowledges with a block event. Each block is cut from the launch's
// events and samples and proven as a launch of its own (block-result.ts).
import { renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { StoppingTracker } from '../analysis/stopping.js';
import type { Mode } from '../schema/events.js';
import type { ModeResult, ResourceSample } from '../schema/profile.js';
import { startSampler, type Sampler } from '../system/probes/samplers.js';
import type { FetchMeter } from './data-sources/fetch-meter.js';
import { CpuLedger, LEDGER_COMPONENTS, type LedgerReading } from '../system/kernel/cpu-ledger.js';
import { writeSubsetList } from '../system/dataset/resident-subset.js';
import { EventsReader, type ProcessEvents } from './events-reader.js';
import { decideBlockStop } from './block-stop.js';
import type { Hang } from '../analysis/stalls.js';
import { HangWatch } from './hang-watch.js';
import { readStageFiles } from './stage-files.js';
import { SupervisedJob, type Job, type JobExit } from './supervisor.js';
import type { CacheState, PreparedState, StateFinish } from './cache-states/cache-state.js';
import {
  blockResult,
  blockSlice,
  freshRunFiles,
  jobEnv,
  type BlockEvidence,
  type BlockSlice,
  type BlockSpan,
  type LaunchEnv,
  type RunFiles,
} from './block-result.js';
import type { ModeProgress, ModeRunInput } from './run-input.js';
import { runAsArgv } from './run-as.js';
import { expectedBlockBytes } from './cached-subset.js';
import { handOver } from '../system/kernel/hand-over.js';
import { heldState, type HeldState } from './continue-run.js';
import { rehearse } from './rehearsal.js';

/** One block of a launch: a mode, its state, and how much of it to measure. */
export interface LaunchBlock {
  mode: Mode;
  /** Name of the block in progress lines and the profile (the run's label). */
  label: string;
  /** The block's state, from the data source. */
  cacheState: CacheState;
  /** Target relative half-width of the block's per-iteration time. */
  precision: number;
  /** Fewest iterations before precision may end the block. */
  minIterations: number;
  /** Iterations after which the block ends whatever its precision. */
  maxIterations: number;
  /** Fewest blocks of the batch-means estimate before precision may end it. */
  minStopBlocks?: number;
}

/** What one launch needs: a run's settings, with blocks in place of one mode. */
export interface LaunchInput
  extends Omit<
    ModeRunInput,
    'mode' | 'cacheState' | 'precision' | 'minIterations' | 'maxIterations' | 'minStopBlocks' | 'onProgress'
  > {
  /** The blocks, in order; more than one only where the job may switch modes. */
  blocks: readonly LaunchBlock[];
  /** Called about every poll with the block's progress. */
  onProgress?: (progress: ModeProgress) => void;
  /** A block after the first starts: its state is set and the job told. */
  onBlockStart?: (block: LaunchBlock) => void;
  /** profile --continue: no budget or timer; after the blocks the control file says `<n> train` and the job runs on. */
  continueRun?: boolean;
}

/** How a launch ended. */
export interface LaunchOutcome {
  /** One result per block the job ran, in order. */
  results: ModeResult[];
  /** The blocks the job never reached: it cannot switch modes, or it ended first. */
  notRun: LaunchBlock[];
  /** False when the job's start event did not offer to switch modes. */
  switchable: boolean;
  /** Iterations the job ran (the most of any process), measured or not. */
  jobIterations: number;
  /** profile --continue: the job, training on after its blocks, and when the blocks ended (ms since the epoch). */
  continuing?: { job: Job; blocksEndedAt: number };
  /** profile --continue: what holding the synthetic blocks' state cost, and the blocks it could not be held for. */
  held?: HeldState;
}

/** A block while the launch runs. */
interface LiveBlock {
  block: LaunchBlock;
  prepared: PreparedState;
  /** What the state reported when it ended (the cold keeper's counters). */
  finish?: StateFinish;
  startedAt: number;
  /** When the block ended, and the profiler's CPU over it (absent while it runs). */
  endedAt?: number;
  cpuBefore: NodeJS.CpuUsage;
  profilerCpuSec?: number;
  /** The ledger when the block started, and the CPU each component charged over the block once it ended. */
  ledgerAtStart: LedgerReading;
  components?: Record<string, number>;
  stopReason: 'precision' | 'budget' | null;
  /** The slowest rank's iterations and mean pace as the block's end was decided, for the estimate of what is left. */
  measured?: { iterations: number; iterMs: number } | null;
  /** Last iteration of the block in each events file, once the block ended. */
  lastI: Map<string, number>;
  trackers: Map<string, StoppingTracker>;
}

// The job's budget (DSA_ITERATIONS) in a launch of several blocks, as a multiple of theirs: the CLI ends each block,
// and the job trains on while a state is set; the budget only bounds a job the CLI lost.
const SAFETY_BUDGET_FACTOR = 10;

/**
 * The sleep between two polls of a block `ageMs` old: pollMs at first, then a tenth of its age, at most POLL_GROWTH
 * times pollMs. A poll costs 0.5 to 1 ms of CPU; a stop seen one poll late costs at most a tenth of the block's time.
 */
export function pollIntervalMs(ageMs: number, pollMs: number): number {
  return Math.max(pollMs, Math.min(POLL_GROWTH * pollMs, ageMs / 10));
}

const POLL_GROWTH = 4;

/** A launch under way: its job, what measures it, and its blocks so far (the last one in progress). */
interface Launch {
  input: LaunchInput;
  files: RunFiles;
  /** The control file of a launch of several blocks, else null. */
  controlFile: string | null;
  /** True when the job was asked to sample only the first block's resident subset. */
  subsetApplied: boolean;
  startedAt: number;
  /** The profiler's own CPU by component, read at each block's start and end. */
  ledger: CpuLedger;
  reader: EventsReader;
  sampler: Sampler;
  /** The latest sample, for the watchdog: a job busy between iterations (a validation pass) is not hung. */
  latestSample(): ResourceSample | null;
  meter: FetchMeter;
  job: Job;
  live: LiveBlock[];
}

/** Starts the job once and measures its blocks in order; a job that cannot switch modes runs the first only. */
export async function runLaunch(input: LaunchInput): Promise<LaunchOutcome> {
  const launch = await startLaunch(input);
  return launchOutcome(launch, await superviseBlocks(launch));
}

/** Sets the first block's state, then starts the meter, the sampler and the job; what started is ended on a failure. */
async function startLaunch(input: LaunchInput): Promise<Launch> {
  const several = input.blocks.length > 1;
  const files = freshRunFiles(input.modeDir);
  // A job started as another user writes its events and reads its control files here.
  if (input.runAs) handOver([input.modeDir], input.runAs, { recursive: true });
  const controlFile = several ? join(input.modeDir, 'CONTROL') : null;
  const first = input.blocks[0];
  const prepared = await first.cacheState.prepare(first.mode, input.dataset);
  // A cached mode on a resident subset measures the subset: the job is asked to sample only from it (DSA_SUBSET_FILE).
  // The job restricts its loader once, at its start: a launch of several blocks cannot restrict only one.
  const subset = several ? undefined : prepared.subset;
  const subsetFile = subset ? join(input.modeDir, 'subset.txt') : null;
  if (subset && subsetFile) writeSubsetList(subsetFile, subset.dataset.files, input.cwd);
  try {
    await input.beforeJobStart?.();
  } catch (error) {
    await prepared.finish();
    throw error;
  }
  const startedAt = Date.now();
  const meterMode = input.blocks.find((b) => b.mode !== 'synthetic')?.mode ?? 'synthetic';
  const meter = input.dataSource.startMeter(meterMode, input.dataset, [input.modeDir]);
  const ledger = input.ledger ?? new CpuLedger();
  const reader = new EventsReader(files.eventsDir, { ledger });
  // No timer of its own: the supervision's poll takes each sample, one wake-up for both.
  let latest: ResourceSample | null = null;
  const sampler = (input.startSampler ?? startSampler)({
    rootPid: null,
    device: input.dataset.device,
    intervalMs: null,
    gpu: input.gpu,
    ledger,
    onSample: (sample) => {
      latest = sample;
    },
  });
  if (!input.startSampler) rehearse(input.dataset.device, join(input.modeDir, 'rehearsal'));
  let job: Job;
  try {
    const env = { mode: first.mode, subsetFile, controlFile, meterEnv: meter.jobEnv };
    job = await startJob(input, files, env);
  } catch (error) {
    sampler.stop();
    await meter.finish([]);
    await prepared.finish();
    throw error;
  }
  sampler.setRoot(job.pid, { spawnedNow: true });
  meter.attach(job.pid);
  input.onJobStarted?.(job);
  const live = [newLiveBlock(first, prepared, startedAt, ledger)];
  const subsetApplied = subsetFile !== null;
  return {
    input,
    files,
    controlFile,
    subsetApplied,
    startedAt,
    ledger,
    reader,
    sampler,
    meter,
    job,
    live,
    latestSample: () => latest,
  };
}

/** Starts the job with the protocol's variables, and its budget and timer (none under --continue). */
function startJob(
  input: LaunchInput,
  files: RunFiles,
  launch: Pick<LaunchEnv, 'mode' | 'subsetFile' | 'controlFile' | 'meterEnv'>,
): Promise<Job> {
  const { blocks, continueRun } = input;
  const budget =
    blocks.length > 1
      ? blocks.reduce((sum, b) => sum + b.maxIterations, 0) * SAFETY_BUDGET_FACTOR
      : blocks[0].maxIterations;
  return (input.startJob ?? SupervisedJob.start)({
    // setpriv inside the cgroup and affinity wraps: those need root, and the job starts as the user in its groups.
    argv: input.wrapArgv(input.runAs ? runAsArgv(input.runAs, input.argv) : input.argv),
    env: jobEnv(input, {
      ...launch,
      eventsDir: files.eventsDir,
      stopFile: files.stopFile,
      iterations: continueRun ? null : budget,
      continueRun: continueRun === true,
    }),
    stdoutFile: files.logs.stdout,
    stderrFile: files.logs.stderr,
    // Each block may take what one run may; superviseBlocks holds each block to it.
    timeoutSec: continueRun ? null : input.timeoutSec * blocks.length,
    killGraceSec: input.killGraceSec,
    cwd: input.cwd,
  });
}

/** Ends the last block and the measurement, and cuts each block's result from the launch's events and samples. */
async function launchOutcome(launch: Launch, supervised: SupervisedLaunch): Promise<LaunchOutcome> {
  const current = launch.live[launch.live.length - 1];
  closeBlock(current, null, launch.ledger);
  const sampled = launch.sampler.stop();
  // A state already ended (setting the next one failed after it) is not ended twice.
  if (current.finish === undefined) current.finish = await current.prepared.finish();
  // After the job's tree is reaped: a meter of the tree's reads has all of them (--continue: those of the blocks).
  const fetched = await launch.meter.finish(sampled);
  if (supervised.error !== null) throw supervised.error;
  const resources = fetched.ownCounter
    ? sampled.map((s, k) => ({ ...s, fetchedBytes: fetched.series[k]?.bytes ?? 0 }))
    : sampled;
  const processes = launch.reader.finish();
  const results = blockResults(launch, supervised, { processes, resources, fetched });
  // A job that ended well too soon into a later block (its data ran out) measured nothing of it, or too little: that
  // block is launched again, as if not reached. A failure in the first block is the job's, and reported.
  const last = results[results.length - 1];
  const ranOut =
    results.length > 1 &&
    (last.status === 'failed' || last.stalled?.cause === 'ended') &&
    supervised.exit?.exitCode === 0 &&
    !supervised.exit.timedOut &&
    supervised.continuedAt === null;
  if (ranOut) results.pop();
  // Read from every event once the job is reaped: a job that ended before a block did still said whether it switches.
  return {
    results,
    notRun: launch.input.blocks.slice(results.length),
    switchable: supervised.switchable || allSwitchable(processes),
    jobIterations: Math.max(0, ...processes.map((p) => p.iterations.length)),
    ...(supervised.continuedAt !== null
      ? { continuing: { job: launch.job, blocksEndedAt: supervised.continuedAt } }
      : {}),
    ...(launch.input.continueRun ? { held: heldState(processes) } : {}),
  };
}

/** Each block's result, once the job is reaped; the last block ends as the job did. */
function blockResults(
  launch: Launch,
  supervised: SupervisedLaunch,
  measured: Pick<BlockEvidence, 'processes' | 'resources' | 'fetched'>,
): ModeResult[] {
  const { live } = launch;
  const stageFiles = readStageFiles(launch.files.eventsDir);
  const jobEnding = supervised.exit && {
    exit: supervised.exit,
    stopReason: supervised.stopReason,
    noIterations: supervised.noIterations,
    hang: supervised.hang,
  };
  return live.map((block, k) => {
    const span = blockSpan(launch, k, {
      startedAt: switchedAt(measured.processes, k, block.startedAt, block.endedAt),
      endedAt: block.endedAt ?? Date.now(),
      sole: live.length === 1,
    });
    const cliEnding = { exit: null, stopReason: block.stopReason, noIterations: false, hang: null };
    return blockResult(launch.input, {
      ...measured,
      span,
      slices: measured.processes.map((p) => blockSlice(p, span)),
      stageFiles,
      prepared: block.prepared,
      cacheFinish: block.finish ?? {},
      profilerCpuSec: block.profilerCpuSec ?? 0,
      profilerCpu: block.components ?? {},
      logs: launch.files.logs,
      subsetApplied: launch.subsetApplied,
      launchExit: supervised.exit ?? STILL_RUNNING,
      minIterations: block.block.minIterations,
      ending: k === live.length - 1 && jobEnding ? jobEnding : cliEnding,
    });
  });
}

/** Block `k`'s place in the launch, with its times as the caller knows them. */
function blockSpan(
  { live, startedAt }: Launch,
  k: number,
  times: Pick<BlockSpan, 'startedAt' | 'endedAt' | 'sole'>,
): BlockSpan {
  const previousMode = k > 0 ? live[k - 1].block.mode : null;
  return {
    index: k,
    mode: live[k].block.mode,
    previousMode,
    lastI: live[k].lastI,
    launchStartedAt: startedAt,
    ...times,
  };
}

/**
 * When the job took block `index`: its ranks' first block event, not before the state was set (on several nodes the
 * wait for the slowest node is none of the block's).
 */
function switchedAt(processes: readonly ProcessEvents[], index: number, setAt: number, endedAt?: number): number {
  if (index === 0) return setAt;
  const times = processes.flatMap((p) => p.blocks.filter((b) => b.block === index).map((b) => b.t));
  const first = times.length > 0 ? Math.min(...times) : setAt;
  return Math.min(Math.max(setAt, first), endedAt ?? Number.POSITIVE_INFINITY);
}

function newLiveBlock(block: LaunchBlock, prepared: PreparedState, startedAt: number, ledger: CpuLedger): LiveBlock {
  return {
    block,
    prepared,
    startedAt,
    cpuBefore: process.cpuUsage(),
    ledgerAtStart: ledger.reading(),
    stopReason: null,
    lastI: new Map(),
    trackers: new Map(),
  };
}

/** Ends a block's measurement: its time, the profiler's CPU, each file's last iteration in it (`slices`; null: all). */
function closeBlock(block: LiveBlock, slices: readonly BlockSlice[] | null, ledger: CpuLedger): void {
  if (block.endedAt !== undefined) return;
  block.endedAt = Date.now();
  const used = process.cpuUsage(block.cpuBefore);
  block.profilerCpuSec = (used.user + used.system) / 1e6;
  const charged = ledger.since(block.ledgerAtStart);
  block.components = Object.fromEntries(
    LEDGER_COMPONENTS.filter((c) => charged[c].calls > 0).map((c) => [c, charged[c].cpuSec]),
  );
  for (const slice of slices ?? []) {
    const last = slice.iterations[slice.iterations.length - 1];
    block.lastI.set(slice.file, last ? last.i : slice.startI - 1);
  }
}

/** A job still running when its blocks' results are built (profile --continue). */
const STILL_RUNNING: JobExit = { exitCode: null, signal: null, stopRequested: false, timedOut: false };

/** What the supervision found as it polled. */
interface Findings {
  /** Why the profiler asked the job to stop, or null when it did not. */
  stopReason: 'precision' | 'budget' | null;
  /** True when the job reported no iteration before firstIterationTimeoutSec. */
  noIterations: boolean;
  /** The watchdog stopped the job: no iteration for many times its median (analysis/stalls.ts); else null. */
  hang: Hang | null;
  /** Whether every process offered to switch modes. */
  switchable: boolean;
  /** Setting a block's state failed: the job was stopped, and the error goes to the caller. */
  error: unknown;
}

/** How the supervision ended: the job's exit (null: it trains on, --continue), and when the profiler let go of it. */
type SupervisedLaunch = Findings & { exit: JobExit | null; continuedAt: number | null };

/** Why a poll ends the launch's blocks. */
type Ending =
  | { why: 'no-iterations' | 'hang' | 'timeout' | 'state-failed' }
  | { why: 'measured'; reason: 'precision' | 'budget'; slices: BlockSlice[] };

/**
 * Polls the job's events until it exits: a block ends once every rank measured enough, and the next one starts; after
 * the last, the stop file ends the job. A job silent from the start or hung is stopped early. Under --continue the
 * profiler lets go of the real run instead, unless a block's state could not be set.
 */
async function superviseBlocks(launch: Launch): Promise<SupervisedLaunch> {
  const { input, job, live } = launch;
  const found: Findings = { stopReason: null, noIterations: false, hang: null, switchable: false, error: null };
  const watch = new HangWatch(input.hangTimeoutSec);
  let exited = false;
  void job.done.then(() => (exited = true));
  let stopping = false;
  while (!exited) {
    await Promise.race([job.done, sleep(pollIntervalMs(Date.now() - live[live.length - 1].startedAt, input.pollMs))]);
    if (!exited) launch.sampler.tick();
    if (exited || stopping) continue;
    const ending = await pollBlocks(launch, found, watch);
    if (ending === null) continue;
    if (input.continueRun && launch.controlFile !== null && ending.why !== 'state-failed')
      return letGo(launch, ending.why === 'measured' ? ending.slices : null, found);
    stopping = true;
    if (ending.why === 'no-iterations') void job.terminate();
    else if (ending.why === 'hang' || ending.why === 'timeout') void job.timeOut();
    else askToStop(launch, ending.why === 'measured' ? ending.reason : null, found);
  }
  return { ...found, exit: await job.done, continuedAt: null };
}

/** One poll: the watchdogs, then whether the block measured enough, and the switch to the next; null: it goes on. */
async function pollBlocks(launch: Launch, found: Findings, watch: HangWatch): Promise<Ending | null> {
  const { input, live } = launch;
  const polled = launch.reader.poll();
  const elapsedSec = (Date.now() - launch.startedAt) / 1000;
  if (elapsedSec > input.firstIterationTimeoutSec && !polled.some((p) => p.iterations.length > 0)) {
    found.noIterations = true;
    return { why: 'no-iterations' };
  }
  // A job with no iteration for many times its median, and at least --hang-timeout, is stopped as hung.
  found.hang = watch.check(polled, launch.latestSample(), Date.now());
  if (found.hang !== null) return { why: 'hang' };
  const current = live[live.length - 1];
  // --timeout is per mode: a block that runs past it ends the launch as a separate run's timer would (the first block's
  // clock starts with the job, as a run's does; the launch's own timer is their sum).
  if ((Date.now() - current.startedAt) / 1000 > input.timeoutSec) return { why: 'timeout' };
  const span = blockSpan(launch, live.length - 1, { startedAt: current.startedAt, endedAt: null, sole: false });
  // The processes that train: a process that never reported an iteration (a rank's helper) decides nothing.
  const slices = polled.filter((p) => p.iterations.length > 0).map((p) => blockSlice(p, span));
  // --continue: a synthetic block never ends the script's epoch, so the first block has no boundary to wait for.
  const decision = decideBlockStop(slices, current, input.continueRun !== true);
  const laterBlocksSec = laterBlocksEstimate(live, input.blocks);
  input.onProgress?.({
    ...decision.progress,
    elapsedSec: (Date.now() - current.startedAt) / 1000,
    ...(laterBlocksSec !== null ? { laterBlocksSec } : {}),
  });
  if (!decision.stop) return null;
  current.stopReason = decision.reason;
  current.measured =
    decision.paceMs !== null ? { iterations: decision.progress.iterations, iterMs: decision.paceMs } : null;
  found.switchable = allSwitchable(polled);
  const next = input.blocks[live.length];
  if (next === undefined || !found.switchable || launch.controlFile === null)
    return { why: 'measured', reason: decision.reason, slices };
  closeBlock(current, slices, launch.ledger);
  try {
    await switchBlock(launch, next, polled);
    return null;
  } catch (caught) {
    found.error = caught;
    return { why: 'state-failed' };
  }
}

/**
 * Sets the next block's state while the job trains on in the old mode (those iterations belong to no block), then names
 * it in the control file; a second block of the same mode keeps the state.
 */
async function switchBlock(launch: Launch, next: LaunchBlock, polled: readonly ProcessEvents[]): Promise<void> {
  const { input, live } = launch;
  const current = live[live.length - 1];
  const keep = next.mode === current.block.mode && next.cacheState === current.block.cacheState;
  if (!keep) current.finish = await current.prepared.finish();
  const hint = { expectedBytes: expectedBlockBytes(polled, next.maxIterations, input.dataset) };
  const prepared = keep ? current.prepared : await next.cacheState.prepare(next.mode, input.dataset, hint);
  // A sample at the block's start: the next one's rates cover the block, not the set-up before it.
  launch.sampler.tick();
  live.push(newLiveBlock(next, prepared, Date.now(), launch.ledger));
  writeControl(launch.controlFile!, live.length - 1, next.mode);
  input.onBlockStart?.(next);
}

/** Asks the job to stop through the stop file, and ends it after the grace. */
function askToStop({ input, job, files }: Launch, reason: Findings['stopReason'], found: Findings): void {
  found.stopReason = reason;
  writeFileSync(files.stopFile, 'enough data\n');
  job.markStopRequested();
  const grace = setTimeout(() => void job.terminate(), input.stopGraceSec * 1000);
  void job.done.then(() => clearTimeout(grace));
}

/** --continue: the blocks are over (or cannot go on); the job is told to train on, and the profiler lets go of it. */
function letGo(launch: Launch, slices: readonly BlockSlice[] | null, found: Findings): SupervisedLaunch {
  closeBlock(launch.live[launch.live.length - 1], slices, launch.ledger);
  writeControl(launch.controlFile!, launch.live.length, 'train');
  return { ...found, exit: null, continuedAt: Date.now() };
}

function allSwitchable(processes: readonly ProcessEvents[]): boolean {
  return processes.length > 0 && processes.every((p) => p.start?.switchModes === true);
}

/**
 * Seconds the later blocks should take: the ended blocks' mean iterations, at the mode's pace where measured, else the
 * slowest so far (an unmeasured cold block is at least that slow). Null before a block has ended.
 */
function laterBlocksEstimate(live: readonly LiveBlock[], blocks: readonly LaunchBlock[]): number | null {
  const ended = live.filter((b) => b.measured);
  if (ended.length === 0) return null;
  const iterations = ended.reduce((sum, b) => sum + b.measured!.iterations, 0) / ended.length;
  const slowest = Math.max(...ended.map((b) => b.measured!.iterMs));
  let ms = 0;
  for (const block of blocks.slice(live.length)) {
    const same = ended.filter((b) => b.block.mode === block.mode);
    const pace = same.length > 0 ? same.reduce((sum, b) => sum + b.measured!.iterMs, 0) / same.length : slowest;
    ms += iterations * pace;
  }
  return ms / 1000;
}

/** Replaces the control file whole (write, then rename): the job never reads half a line. */
function writeControl(path: string, block: number, mode: Mode | 'train'): void {
  const partial = `${path}.partial`;
  writeFileSync(partial, `${block} ${mode}\n`);
  renameSync(partial, path);
}
