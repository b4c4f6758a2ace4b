// A block of a launch as a run's result: its iterations cut from the job's events (from its switch to its end, less the
// batches carried over from the previous block's state), its samples cut from the launch's, and its state proven from
// its own window, exactly as a launch of its own would be.
import { mkdirSync, rmSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { mainCpuMsPerSample } from '../analysis/main-cpu.js';
import { pickPaceRank } from '../analysis/pace.js';
import { summarizeIterations } from '../analysis/summarize.js';
import { markWarmup } from '../analysis/warmup.js';
import { blockStall, fetchStall, timeoutStall, type Hang } from '../analysis/stalls.js';
import { STALL_TEXT } from '../analysis/stall-text.js';
import {
  ENV,
  PROTOCOL_VERSION,
  type CheckpointEvent,
  type EpochEvent,
  type Mode,
  type StagesEvent,
  type StartEvent,
} from '../schema/events.js';
import type {
  FirstBatch,
  Iteration,
  IterationSummary,
  NetworkUse,
  ModeResult,
  RankResult,
  ResourceSample,
  Stall,
  StateProof,
} from '../schema/profile.js';
import { processNode, type ProcessEvents } from './events-reader.js';
import { stageTotalsBetween } from './stage-files.js';
import type { JobExit } from './supervisor.js';
import { PROOF_TEXT } from './proof-text.js';
import { proveState, type SubsetEvidence } from './state-proof.js';
import { idleLoaderSpans, type ReadProof, windowRates, windowReadProof } from './window-rates.js';
import { pythonHookEnv } from './python-hook.js';
import { runAsEnv } from './run-as.js';
import type { PreparedState, StateFinish } from './cache-states/cache-state.js';
import type { FetchReadings } from './data-sources/fetch-meter.js';
import type { ModeRunInput } from './run-input.js';

/** Where one launch keeps its events, stop request and logs. */
export interface RunFiles {
  eventsDir: string;
  stopFile: string;
  logs: { stdout: string; stderr: string };
}

/** The launch's folder, emptied: an earlier run's must not lend it events or a stop request. */
export function freshRunFiles(modeDir: string): RunFiles {
  const eventsDir = join(modeDir, 'events');
  rmSync(modeDir, { recursive: true, force: true });
  mkdirSync(eventsDir, { recursive: true });
  return {
    eventsDir,
    stopFile: join(modeDir, 'STOP'),
    logs: { stdout: join(modeDir, 'stdout.log'), stderr: join(modeDir, 'stderr.log') },
  };
}

/** What the job's environment says of its launch (the protocol's variables). */
export interface LaunchEnv {
  /** The first block's mode (DSA_MODE). */
  mode: Mode;
  eventsDir: string;
  stopFile: string;
  subsetFile: string | null;
  /** The control file of a launch of several blocks, or null. */
  controlFile: string | null;
  /** The job's iteration budget (DSA_ITERATIONS), or null for none. */
  iterations: number | null;
  /** Variables the data source's meter needs (a proxy, its own clients' counters). */
  meterEnv: Record<string, string> | undefined;
  /** profile --continue (DSA_CONTINUE). */
  continueRun?: boolean;
}

export function jobEnv(
  input: Pick<ModeRunInput, 'env' | 'runAs' | 'sync' | 'numWorkers'>,
  launch: LaunchEnv,
): Record<string, string | undefined> {
  return {
    ...input.env,
    ...(input.runAs ? runAsEnv(input.runAs) : {}),
    ...launch.meterEnv,
    ...pythonHookEnv(input.env),
    [ENV.mode]: launch.mode,
    [ENV.eventsDir]: launch.eventsDir,
    ...(launch.iterations !== null ? { [ENV.iterations]: String(launch.iterations) } : {}),
    [ENV.stopFile]: launch.stopFile,
    [ENV.sync]: input.sync ? '1' : '0',
    [ENV.protocol]: String(PROTOCOL_VERSION),
    // profile --continue: the job is the user's real run, whose own side effects (uploads, trackers) must happen.
    ...(launch.continueRun ? { [ENV.continueRun]: '1' } : { [ENV.profiling]: '1' }),
    ...(launch.subsetFile !== null ? { [ENV.subsetFile]: launch.subsetFile } : {}),
    ...(launch.controlFile !== null ? { [ENV.controlFile]: launch.controlFile } : {}),
    ...(input.numWorkers !== undefined ? { [ENV.numWorkers]: String(input.numWorkers) } : {}),
  };
}

/** A block's place and time in its launch. */
export interface BlockSpan {
  /** Its place in the launch, from 0. */
  index: number;
  mode: Mode;
  /** The previous block's mode (null for the first): after one of its own mode nothing is carried over. */
  previousMode: Mode | null;
  /** ms since the epoch: when its state was set and the job told (the launch's start for the first). */
  startedAt: number;
  /** When the CLI ended it, or null while it runs. */
  endedAt: number | null;
  /** Each events file's last iteration in the block, once it ended. */
  lastI: ReadonlyMap<string, number>;
  /** When the launch started (the first batch is timed from it). */
  launchStartedAt: number;
  /** True when it is the only block its launch ran: the launch's samples and whole-run bytes are all its own. */
  sole: boolean;
}

/** One process's share of a block. */
export interface BlockSlice {
  file: string;
  start: StartEvent | null;
  /** Whether the process has entered the block (the first block: always; a later one: its block event came). */
  entered: boolean;
  /** Whether the process said it runs the block's mode (its start event's mode, or the block event's). */
  acknowledged: boolean;
  /** The block's first iteration index. */
  startI: number;
  /** Its iterations, the carried ones included. */
  iterations: Iteration[];
  /** Of those, the first ones prepared under the previous block's state (the loader's batches in flight). */
  carried: number;
  /** Its iterations after the carried ones: what the block measures. */
  measured: Iteration[];
  epochs: EpochEvent[];
  checkpoints: CheckpointEvent[];
  workers: number | null;
  badLines: number;
  end: ProcessEvents['end'];
}

/**
 * One process's share of a block: its iterations from the switch (its block event) to the block's end. The first
 * `inFlight` of them, the batches the loader held at the switch, were prepared under the previous state and are
 * carried (docs/method.md, "One launch"); a loader that does not say carries none, and the warm-up detection finds what
 * it left.
 */
export function blockSlice(events: ProcessEvents, span: BlockSpan): BlockSlice {
  const switched = span.index === 0 ? null : events.blocks.find((b) => b.block === span.index);
  const entered = span.index === 0 || switched !== undefined;
  const startI = span.index === 0 ? 0 : (switched?.i ?? Infinity);
  const lastI = span.lastI.get(events.file) ?? Infinity;
  const within = <T extends { i: number }>(list: readonly T[]) => list.filter((x) => x.i >= startI && x.i <= lastI);
  const iterations = entered ? within(events.iterations) : [];
  const carried = span.previousMode === span.mode ? 0 : Math.min(iterations.length, switched?.inFlight ?? 0);
  return {
    file: events.file,
    start: events.start,
    entered,
    acknowledged: span.index === 0 ? events.start?.mode === span.mode : switched?.mode === span.mode,
    startI,
    iterations,
    carried,
    measured: iterations.slice(carried),
    epochs: entered ? within(events.epochs) : [],
    checkpoints: entered ? within(events.checkpoints) : [],
    workers: events.start?.workers ?? null,
    badLines: events.badLines,
    end: events.end,
  };
}

/** How the block ended: the launch's exit for the last block, the CLI's stop for an earlier one. */
export interface BlockEnding {
  /** The job's exit, for the block the job ended in; null for a block the CLI ended and the launch went on. */
  exit: JobExit | null;
  stopReason: 'precision' | 'budget' | null;
  noIterations: boolean;
  /** The watchdog ended the block: the job made no progress (analysis/stalls.ts hangOf); null when it did not. */
  hang: Hang | null;
}

/** What a block's result is built from, once the launch's job is reaped. */
export interface BlockEvidence {
  span: BlockSpan;
  slices: BlockSlice[];
  /** Every process's events over the launch (for the subset acknowledgement). */
  processes: ProcessEvents[];
  /** The loader processes' stage totals over the launch (stage-files.ts); absent: none read. */
  stageFiles?: StagesEvent[][];
  /** The launch's resource samples. */
  resources: ResourceSample[];
  fetched: FetchReadings;
  prepared: PreparedState;
  cacheFinish: StateFinish;
  profilerCpuSec: number;
  /** Of it, what each component charged to the profiler's CPU ledger over the block, s. */
  profilerCpu: Record<string, number>;
  logs: RunFiles['logs'];
  ending: BlockEnding;
  /** How the launch's job ended. */
  launchExit: JobExit;
  /** True when the job was asked to sample only the prepared state's resident subset (a launch of one cached block). */
  subsetApplied: boolean;
  /** Fewest measured iterations the block needs: a timeout that left fewer stalls it. */
  minIterations: number;
}

/** A block's result: a ModeResult as a run of its own would give, with its place in the launch. */
export function blockResult(
  input: Pick<ModeRunInput, 'dataset' | 'dataSource' | 'pollMs' | 'numWorkers' | 'interrupted' | 'timeoutSec'>,
  evidence: BlockEvidence,
): ModeResult {
  const { span } = evidence;
  const ranks = evidence.slices.filter((s) => s.start !== null || s.iterations.length > 0).map(toRankResult);
  const pace = pickPaceRank(ranks) as (typeof ranks)[number] | null;
  const measuredIterations = pace?.summary ? pace.iterations.filter((it) => !it.warmup) : [];
  const endedAt = span.endedAt ?? Date.now();
  const wallSec = (endedAt - span.startedAt) / 1000;
  const { resources, fetched, network } = blockReadings(input.pollMs, evidence, endedAt);
  const proof = proveBlock(input, span.mode, { ...evidence, fetched, ranks, measuredIterations, wallSec });
  const cpuRate = windowRates(resources, measuredIterations, (s) => s.jobCpuSec);
  const readRate = windowRates(fetched.series, measuredIterations, (s) => s.bytes);
  const { status, reason } = classify(evidence, pace?.summary ?? null, input.interrupted());
  // An interrupted block is the user's stop, not a stall.
  const stalled =
    status === 'interrupted'
      ? null
      : stallOf(input, evidence, {
          fetched,
          endedAt,
          wallSec,
          status,
          stopReason: reason,
          measured: pace?.summary?.measuredIterations,
        });
  const answer = subsetAnswer(evidence.processes);
  const subset = evidence.subsetApplied ? evidence.prepared.subset : undefined;
  // A block among others owns the stage times of its own span; the sole block all of them.
  const prepStages = stageTotalsBetween(
    evidence.stageFiles ?? [],
    span.sole ? null : span.startedAt,
    span.sole ? null : endedAt,
  );
  const carriedIterations = evidence.slices.find((s) => s.file === pace?.file)?.carried ?? 0;
  return {
    mode: span.mode,
    status,
    stopReason: reason,
    // Every block's result is built once the launch's job is reaped: each says how the job ended.
    jobExitCode: evidence.launchExit.exitCode,
    jobSignal: evidence.launchExit.signal,
    startedAt: span.startedAt,
    wallSec,
    state: stalled ? { ...proof, proven: false, reason: STALL_TEXT.proofReason(stalled.text) } : proof,
    ranks: ranks.map(({ file: _file, ...rank }) => rank),
    paceRank: pace?.rank ?? null,
    summary: pace?.summary ?? null,
    resources,
    jobCpuSecPerSample: cpuRate?.perSample ?? null,
    storageReadBytesPerSec: readRate?.perSec ?? null,
    badEventLines: span.index === 0 ? evidence.slices.reduce((sum, s) => sum + s.badLines, 0) : 0,
    logs: evidence.logs,
    cpus: null,
    profilerCpuSec: evidence.profilerCpuSec,
    profilerCpu: evidence.profilerCpu,
    ...(input.numWorkers !== undefined ? { workersAsked: input.numWorkers } : {}),
    ...(network ? { network } : {}),
    firstBatch: span.index === 0 ? firstBatchOf(ranks, span.launchStartedAt) : null,
    ...(subset
      ? {
          subset: {
            ...subset.record,
            jobSamples: answer.jobSamples ?? null,
            ...(answer.jobNote !== undefined ? { jobNote: answer.jobNote } : {}),
          },
        }
      : {}),
    ...(prepStages !== null ? { prepStages } : {}),
    ...(span.sole && span.index === 0 ? {} : { block: { index: span.index, carriedIterations } }),
    ...(stalled ? { stalled } : {}),
  };
}

/** The launch's samples, series and network over the block's own time; the sole block of a launch owns them all. */
function blockReadings(pollMs: number, { span, resources, fetched }: BlockEvidence, endedAt: number) {
  if (span.sole) return { resources, fetched, network: fetched.network };
  const [from, to] = [span.startedAt - pollMs, endedAt + pollMs];
  return {
    resources: blockResources(resources, from, to),
    fetched: { ...fetched, series: fetched.series.filter((s) => s.t >= from && s.t <= to) },
    network: blockNetworkOf(fetched, span, endedAt) ?? fetched.network,
  };
}

/** The block's status and stop reason: ok for one the CLI ended; the block the job ended in goes as the job did. */
function classify(
  { ending, slices }: BlockEvidence,
  summary: IterationSummary | null,
  interrupted: boolean,
): { status: ModeResult['status']; reason: ModeResult['stopReason'] } {
  const exit = ending.exit;
  if (exit === null) return { status: 'ok', reason: ending.stopReason ?? 'budget' };
  if (interrupted) return { status: 'interrupted', reason: 'interrupted' };
  if (ending.noIterations) return { status: 'failed', reason: 'no-iterations' };
  if (exit.timedOut) return summary ? { status: 'ok', reason: 'timeout' } : { status: 'failed', reason: 'timeout' };
  const stopReason = ending.stopReason ?? (slices.some((s) => s.end?.reason === 'budget') ? 'budget' : null);
  if (stopReason !== null) return { status: 'ok', reason: stopReason };
  if (exit.exitCode !== 0) return { status: 'failed', reason: 'job-failed' };
  // Iterations too few for a summary, the job's exit its own (an epoch limit): a block it ended early (stallOf).
  if (!summary && !slices.some((s) => s.iterations.length > 0)) return { status: 'failed', reason: 'no-iterations' };
  return { status: 'ok', reason: 'job-exit' };
}

/** What the job said of the resident subset it was asked to keep (its start event): the samples it kept, its note. */
function subsetAnswer(processes: readonly ProcessEvents[]): Pick<SubsetEvidence, 'jobSamples' | 'jobNote'> {
  return {
    jobSamples: processes.find((p) => p.start?.subsetFiles !== undefined)?.start?.subsetFiles,
    jobNote: processes.find((p) => p.start?.subsetNote !== undefined)?.start?.subsetNote,
  };
}

/** Whether the block stalled (analysis/stalls.ts): its fetches, the watchdog, a timeout with too few iterations. */
function stallOf(
  input: Pick<ModeRunInput, 'dataset' | 'timeoutSec'>,
  { span, ending, slices, minIterations }: BlockEvidence,
  run: {
    fetched: FetchReadings;
    endedAt: number;
    wallSec: number;
    status: ModeResult['status'];
    stopReason: ModeResult['stopReason'];
    measured: number | undefined;
  },
): Stall | null {
  const endedByTimeout = ending.exit?.timedOut === true;
  const arrivals = slices.flatMap((s) => s.iterations);
  const block = { mode: span.mode, startedAt: span.startedAt, endedAt: run.endedAt, endedByTimeout };
  const fetchesFrom = input.dataset.source?.fetchesFrom ?? 'storage';
  const fetch = fetchStall(run.fetched.series, arrivals, { ...block, fetchesFrom });
  // A failed block is no measurement already, and says why; an ok one that --timeout cut short is none either.
  const timeout = timeoutStall(
    {
      ...block,
      endedByTimeout: endedByTimeout && run.status === 'ok',
      endedByJob: run.stopReason === 'job-exit',
      ran: Math.max(0, ...slices.map((s) => s.iterations.length - s.carried)),
      wallSec: run.wallSec,
    },
    run.measured ?? 0,
    minIterations,
    input.timeoutSec,
  );
  return blockStall(span.mode, span.startedAt, { hang: ending.hang, fetch, timeout });
}

/**
 * The launch's samples within a block's time, the tree's write counter from the block's start (the checkpoint analysis
 * reads it as the run's writes; the other counters are only differenced).
 */
function blockResources(samples: readonly ResourceSample[], fromMs: number, toMs: number): ResourceSample[] {
  const within = samples.filter((s) => s.t >= fromMs && s.t <= toMs);
  const base = within.find((s) => s.jobWriteBytes !== undefined)?.jobWriteBytes;
  return base === undefined
    ? within
    : within.map((s) =>
        s.jobWriteBytes === undefined ? s : { ...s, jobWriteBytes: Math.max(0, s.jobWriteBytes - base) },
      );
}

/**
 * The job's first batch: the last rank's, from the job's start (null: no iteration). The loader's first wait starts at
 * its first epoch event where timed (workers start there), else at its first request for a batch.
 */
export function firstBatchOf(ranks: readonly RankResult[], startedAt: number): FirstBatch | null {
  const firsts = ranks.flatMap((r) =>
    r.iterations[0]
      ? [{ it: r.iterations[0], epoch: r.epochs?.find((e) => e.epoch === 0 && e.i === r.iterations[0].i) }]
      : [],
  );
  if (firsts.length === 0) return null;
  const last = firsts.reduce((a, b) => (b.it.t > a.it.t ? b : a));
  const sec = Math.max(0, (last.it.t - startedAt) / 1000);
  const firstWaitSec = Math.min(sec, (last.it.waitMs + (last.epoch?.createMs ?? 0)) / 1000);
  return { sec, startupSec: sec - firstWaitSec, firstWaitSec };
}

/** A block's evidence for its proof. */
interface ProofEvidence extends BlockEvidence {
  ranks: RankResult[];
  /** The pace-setting rank's iterations after its warm-up. */
  measuredIterations: Iteration[];
  wallSec: number;
}

/** What the job's clients counted under a block among others, where they count by block (one launch, remote data). */
function blockNetworkOf(fetched: FetchReadings, span: BlockSpan, endedAt: number): NetworkUse | undefined {
  return span.sole ? undefined : fetched.networkOfBlock?.(span.index, span.startedAt, endedAt);
}

/**
 * The block's state proof from the data source's evidence (its state's residency, its meter's bytes over the measured
 * window, or over the whole run when its readings do not cover the window) and the job's (the bytes and samples it
 * consumed, whether it acknowledged the mode and kept a subset).
 */
function proveBlock(input: Pick<ModeRunInput, 'dataset' | 'dataSource'>, mode: Mode, run: ProofEvidence): StateProof {
  const subset = run.subsetApplied ? run.prepared.subset : undefined;
  const measured = subset?.dataset ?? input.dataset;
  const allIterations = run.ranks.flatMap((r) => r.iterations);
  const samples = allIterations.reduce((sum, it) => sum + it.samples, 0);
  const reportedBytes = allIterations.every((it) => it.bytes !== undefined)
    ? allIterations.reduce((sum, it) => sum + (it.bytes ?? 0), 0)
    : null;
  // A source's own counter (the proxy, a FUSE daemon's sockets) counts the data's traffic alone, so the cold mode is
  // judged over the whole run: a window misses the reads a deep prefetch made before it opened, when the job ends at
  // its data's end (8 workers x 2 batches ahead counted 85% on a GPU job). The cached mode keeps the window: the
  // start-up's metadata (an s3fs HEAD per file an ImageFolder lists) would count against it (5.2% over a whole run,
  // seen), and a read during its window is what disproves it. The job tree's read_bytes also count imports and model
  // loading, so local files are judged over the window, where the readings cover it. A block among others is judged
  // over its window (the whole launch's bytes are every block's), or by the bytes counted under it where the job's
  // clients count by block (blockReadProof).
  const wholeRun =
    mode === 'cold' && run.fetched.ownCounter === true && run.fetched.wholeRunBytes !== null && run.span.sole;
  const sampleBytes = measured.sampleBytes ?? measured.meanFileBytes;
  // A block too short for a summary has no measured window; where the job's hook answered from a copy, or where the
  // block is one among others, its iterations after those carried in are the window (residency cannot judge a copy the
  // hook answers every request from, and the launch's bytes are every block's: its imports, the next block's cold
  // reads, seen failing a cached block of --continue at 1900%).
  const answered = run.fetched.series.some((s) => s.localBytes !== undefined);
  const aside = idleLoaderSpans(run.ranks);
  const over = (window: Iteration[]) => windowReadProof(run.fetched.series, window, allIterations, sampleBytes, aside);
  const afterCarried = () => allIterations.filter((it) => !it.warmup).sort((a, b) => a.t - b.t);
  // Where the job's lines say which block they were counted in, the block's own bytes prove it, however late read.
  const blockNetwork = blockNetworkOf(run.fetched, run.span, run.span.startedAt + run.wallSec * 1000);
  const byBlock = blockNetwork ? blockReadProof(blockNetwork, run.slices, sampleBytes, answered) : null;
  const byWindow = byBlock === null && !wholeRun;
  const byMeasured = byWindow ? over(run.measuredIterations) : null;
  const fallBack = byWindow && byMeasured === null && (answered || !run.span.sole);
  const windowIterations = fallBack ? afterCarried() : run.measuredIterations;
  const window = byBlock ?? (fallBack ? over(windowIterations) : byMeasured);
  // Without a window, a sole block is judged over the whole run; a block among others is not judged at all.
  const uncovered = window === null && !run.span.sole;
  return proveState({
    mode,
    residentBytesBefore: run.prepared.residentBytesBefore,
    datasetBytes: measured.bytes,
    readBytes: window?.readBytes ?? (uncovered ? null : run.fetched.wholeRunBytes),
    readBytesSource: byBlock
      ? (run.fetched.blockSource ?? run.fetched.seriesSource)
      : window
        ? run.fetched.seriesSource
        : uncovered
          ? PROOF_TEXT.blockUncovered(run.fetched.seriesSource)
          : run.fetched.wholeRunSource,
    ...(window?.localBytes !== undefined ? { localBytes: window.localBytes } : {}),
    ...(window?.asideBytes !== undefined ? { asideBytes: window.asideBytes } : {}),
    fetchesFrom: input.dataset.source?.fetchesFrom,
    consumedBytes: window?.consumedBytes ?? reportedBytes ?? samples * sampleBytes,
    consumedSamples: window?.consumedSamples ?? samples,
    consumedBytesEstimated: reportedBytes === null,
    jobAcknowledgedMode: run.slices.some((s) => s.acknowledged),
    fitsInMemory: measured.fitsInMemory,
    reEvictions: run.cacheFinish.reEvictions,
    ...(run.prepared.otherActiveFile ? { otherActiveFile: run.prepared.otherActiveFile } : {}),
    keeper: run.cacheFinish.keeper && { ...run.cacheFinish.keeper, modeWallSec: run.wallSec },
    sourceLimit: input.dataSource.proofLimit(mode, input.dataset) ?? run.fetched.proofLimit ?? null,
    ...(subset
      ? { subset: { files: subset.record.files, reason: subset.record.reason, ...subsetAnswer(run.processes) } }
      : {}),
    // The files open in the window (a later block's validation pass is not this one's reads).
    otherReads: run.fetched.otherReads(
      window && windowIterations.length > 0 ? windowIterations[0].t : -Infinity,
      window ? aside : [],
      window && windowIterations.length > 0 ? windowIterations.at(-1)!.t : Infinity,
    ),
  });
}

/**
 * A block's bytes as the job's clients counted them under it (their lines carry the block, so a line read late still
 * counts in its own block), against what the block's iterations after the carried ones consumed: the batches its own
 * fetches served. The block's last fetches serve the next block's carried batches, as the block before it served its
 * own: at the same rate they weigh alike, and a short block's share may pass 100%.
 */
function blockReadProof(
  network: NetworkUse,
  slices: readonly BlockSlice[],
  sampleBytes: number,
  answered: boolean,
): ReadProof | null {
  const measured = slices.flatMap((s) => s.measured);
  const consumedBytes = measured.reduce((sum, it) => sum + (it.bytes ?? it.samples * sampleBytes), 0);
  const consumedSamples = measured.reduce((sum, it) => sum + it.samples, 0);
  if (consumedBytes <= 0) return null;
  return {
    readBytes: network.originBytes,
    ...(answered ? { localBytes: network.cacheBytes } : {}),
    consumedBytes,
    consumedSamples,
  };
}

/** A rank's result over its slice of the block; the carried iterations count as its warm-up. */
function toRankResult(slice: BlockSlice): RankResult & { file: string } {
  const workers = slice.workers;
  const summary = summarizeIterations(slice.measured, { workers });
  const warmup = slice.carried + (summary?.warmupIterations ?? 0);
  const shifted = summary && slice.carried > 0 ? { ...summary, warmupIterations: warmup } : summary;
  const mainCpu = summary ? mainCpuMsPerSample(slice.iterations, warmup) : null;
  const start = slice.start;
  return {
    file: slice.file,
    rank: start?.rank ?? 0,
    node: processNode(slice, hostname()),
    pid: start?.pid ?? 0,
    workers,
    ...(start?.loader ? { loader: start.loader } : {}),
    ...(mainCpu !== null ? { mainCpuMsPerSample: mainCpu } : {}),
    iterations: markWarmup(slice.iterations, summary ? warmup : slice.carried),
    summary: shifted,
    ...(slice.checkpoints.length > 0 ? { checkpoints: slice.checkpoints.map(eventRecord) } : {}),
    ...(slice.epochs.length > 0 ? { epochs: slice.epochs.map(eventRecord) } : {}),
  };
}

/** An event as the profile keeps it: without the protocol's version, type and rank (the rank's result has those). */
function eventRecord<T extends { v: unknown; type: unknown; rank?: unknown }>({
  v: _v,
  type: _t,
  rank: _r,
  ...record
}: T) {
  return record;
}
