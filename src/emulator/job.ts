import { Command, CommanderError, InvalidArgumentError, Option } from 'commander';
import { basename } from 'node:path';
import { performance } from 'node:perf_hooks';
import { UserError } from '../errors.js';
import { formatBytes } from '../units.js';
import { EMULATOR_TEXT } from './emulator-text.js';
import { ENV, MODES, type Mode } from '../schema/events.js';
import {
  ControlFile,
  fromEnv,
  readProtocolEnv,
  restrictToSubset,
  StopFile,
  type EndReason,
  type EventWriter,
} from '../protocol/writer.js';
import { listDatasetFiles } from './generate-dataset.js';
import { PREP_CLOCKS, type PrepClock } from './prep-clock.js';
import { usePrepClock } from './prep.js';
import { Loader, type Batch } from './loader.js';

/**
 * The emulated training job: `node dist/src/emulator/job.js --data DIR [options]`. A training loop over a
 * DataLoader-like loader (./loader.ts) with real file reads and real CPU pre-processing, and an emulated accelerator
 * that sleeps --compute-ms per batch (as MLPerf Storage and DLIO emulate accelerators). The sleep blocks the loop's
 * thread, as a training loop blocks in a device synchronisation; loader replies queue meanwhile and are taken between
 * iterations. It speaks the event protocol v1 when DSA_MODE is set, and runs unprofiled (printing only a summary line)
 * when it is not.
 */

/** Options of the emulated job: parseOptions' flags, each with its help there. */
interface JobOptions {
  data: string;
  remoteBase?: string;
  batchSize: number;
  workers: number;
  prefetchFactor: number;
  computeMs: number;
  prepMs: number;
  prepClock: PrepClock;
  epochs?: number;
  iterations?: number;
  seed: number;
  crashAtIteration?: number;
  /** The count is of the mode's iterations (DSA_MODE, or the block the control file switched to). */
  crashMode?: Mode;
  hangAtIteration?: number;
  hangMode?: Mode;
}

/**
 * Exit code of a crash asked for with --crash-at-iteration: none of the CLI's own exit codes (src/errors.ts), so a test
 * can tell the job's crash apart.
 */
export const CRASH_EXIT_CODE = 42;

function integer(min: number) {
  return (text: string): number => {
    const value = Number(text);
    if (text.trim() === '' || !Number.isInteger(value) || value < min) {
      throw new InvalidArgumentError(`expected an integer of at least ${min}, got '${text}'`);
    }
    return value;
  };
}

function milliseconds(text: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value < 0) {
    throw new InvalidArgumentError(`expected a number of milliseconds >= 0, got '${text}'`);
  }
  return value;
}

function parseOptions(argv: readonly string[]): JobOptions {
  const program = new Command('ds-analyzer-emulated-job')
    .description(
      'Emulated training job (DataLoader-like loader, sleeping accelerator) speaking the ds-analyzer event protocol v1',
    )
    .requiredOption('--data <dir>', 'dataset folder (sample-NNNNN.bin files of a generated dataset)')
    .option(
      '--remote-base <url>',
      'fetch each sample with a GET of URL/NAME (through HTTP_PROXY when set) instead of reading it; the names ' +
        'come from --data',
    )
    .option('--batch-size <n>', 'samples per batch', integer(1), 8)
    .option('--workers <n>', 'loader worker threads (0: load in the training loop)', integer(0), 2)
    .option('--prefetch-factor <k>', 'batches in flight per worker', integer(1), 2)
    .option('--compute-ms <ms>', 'emulated accelerator time per batch', milliseconds, 20)
    .option('--prep-ms <ms>', 'CPU pre-processing time per sample', milliseconds, 2)
    .addOption(
      new Option(
        '--prep-clock <clock>',
        'count --prep-ms in wall time, or in CPU time of the worker (CPU limits then slow prep)',
      )
        .choices(PREP_CLOCKS)
        .default('wall'),
    )
    .option('--epochs <n>', 'epochs to run (default 1, unbounded with an iteration budget)', integer(1))
    .option('--iterations <n>', `iteration budget (default: ${ENV.iterations}, else --epochs)`, integer(1))
    .option('--seed <n>', 'seed of the epoch permutations', integer(0), 1)
    .option('--crash-at-iteration <n>', `for tests: exit with code ${CRASH_EXIT_CODE} after n iterations`, integer(0))
    .addOption(new Option('--crash-mode <mode>', `crash only when ${ENV.mode} is this mode`).choices(MODES))
    .option(
      '--hang-at-iteration <n>',
      'for tests: stop iterating after n iterations and wait until killed (ignores the stop file)',
      integer(0),
    )
    .addOption(new Option('--hang-mode <mode>', `hang only when ${ENV.mode} is this mode`).choices(MODES))
    .exitOverride()
    .parse(argv, { from: 'user' });
  return program.opts<JobOptions>();
}

function nowMs(): number {
  return performance.now();
}

// Never notified: Atomics.wait on it only times out.
const sleeper = new Int32Array(new SharedArrayBuffer(4));

// Spun rather than slept at the end of a compute: Atomics.wait wakes about 0.2 ms late.
const SPIN_TAIL_MS = 0.5;

/**
 * Blocks the thread until the deadline, as a training loop blocks in a device synchronisation (CUDA spins at the end,
 * too, under cudaDeviceScheduleSpin). A setTimeout sleep overshot a 10 ms compute by 0.5 ms (timers have millisecond
 * granularity and fire late under load); this one is within microseconds.
 */
function blockUntil(deadlineMs: number): void {
  for (;;) {
    const leftMs = deadlineMs - SPIN_TAIL_MS - nowMs();
    if (leftMs <= 0) break;
    Atomics.wait(sleeper, 0, 0, leftMs);
  }
  while (nowMs() < deadlineMs);
}

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

// The loop lets the event loop run at least this often, for signals: a replayed batch never waits on anything but
// microtasks. Not every iteration, as a turn of the event loop costs about 0.1 ms, 1% of a 10 ms iteration.
const YIELD_EVERY_MS = 20;

/** Waits until a signal ends the process: a handle keeps the event loop alive, nothing else happens. */
function hangForever(): Promise<never> {
  setInterval(() => undefined, 2 ** 30);
  return new Promise<never>(() => undefined);
}

/**
 * The batches of a launch whose mode may switch (DSA_CONTROL_FILE): the real loader's, or in a synthetic block the last
 * real batch again. The loader keeps its workers through a synthetic block, as the PyTorch hook does: the batches they
 * prefetched are counted as in flight at the next switch.
 */
function switchableBatches(loader: Loader, epochs: number, modeNow: () => Mode | undefined): AsyncIterator<Batch> {
  const real = loader.batches(epochs);
  let replay: Batch | null = null;
  return {
    async next() {
      if (modeNow() === 'synthetic' && replay !== null) return { done: false, value: replay };
      const next = await real.next();
      if (!next.done) replay = { ...next.value, bytes: 0 };
      return next;
    },
  };
}

async function* syntheticBatches(loader: Loader): AsyncGenerator<Batch> {
  // One batch from the real loader, then the loader is never consulted again.
  const first = await loader.batches(Infinity, 1).next();
  void loader.close();
  if (first.done) return;
  yield first.value;
  // bytes: bytes read from files for the batch; a replayed batch reads none.
  const replay: Batch = { ...first.value, bytes: 0 };
  for (;;) yield replay;
}

function formatMs(ms: number): string {
  return ms.toFixed(ms < 10 ? 2 : 1);
}

type ProtocolEnv = ReturnType<typeof readProtocolEnv>;
type Subset = ReturnType<typeof restrictToSubset> | null;

/** The files to read: a cached mode on a resident subset samples only from the listed ones (DSA_SUBSET_FILE). */
function datasetFiles(options: JobOptions, env: ProtocolEnv): { files: string[]; restricted: Subset } {
  const all = listDatasetFiles(options.data);
  const restricted =
    env.mode === 'cached' && env.subsetFile !== undefined ? restrictToSubset(all, env.subsetFile) : null;
  const local = restricted && restricted.kept.length > 0 ? restricted.kept : all;
  const files = options.remoteBase
    ? local.map((path) => `${options.remoteBase!.replace(/\/$/, '')}/${basename(path)}`)
    : local;
  return { files, restricted };
}

function openWriter(options: JobOptions, env: ProtocolEnv, workers: number, restricted: Subset): EventWriter | null {
  return fromEnv(process.env, {
    batchSize: options.batchSize,
    workers,
    source: 'emulator',
    loader: {
      workers,
      ...(env.numWorkers !== undefined ? { scriptWorkers: options.workers } : {}),
      ...(workers > 0 ? { prefetchFactor: options.prefetchFactor } : {}),
    },
    ...(restricted
      ? { subsetNote: restricted.note, ...(restricted.kept.length > 0 ? { subsetFiles: restricted.kept.length } : {}) }
      : {}),
    ...(env.controlFile !== undefined ? { switchModes: true } : {}),
  });
}

function startLoader(options: JobOptions, files: string[], workers: number): Loader {
  // With --workers 0 the batches are prepared in this thread.
  usePrepClock(options.prepClock);
  return Loader.start({
    files,
    batchSize: options.batchSize,
    workers,
    prefetchFactor: options.prefetchFactor,
    prepMs: options.prepMs,
    prepClock: options.prepClock,
    seed: options.seed,
    onDecodeOverrun: (overrun) =>
      process.stderr.write(
        `emulated job: warning: decoding alone took longer than ` +
          `--prep-ms ${options.prepMs} for ${overrun.overruns} of ${overrun.samples} samples ` +
          `(mean decode ${formatMs(overrun.meanDecodeMs)} ms); those samples take longer than asked: raise --prep-ms\n`,
      ),
  });
}

/**
 * What the loop has done so far, and the mode it is in. An iteration's compute is the time from receiving its batch to
 * asking for the next one (protocol v1), so writing its event, the stop-file check and any bookkeeping count too: its
 * event is written when the next request starts.
 */
class Progress {
  iterations = 0;
  /** Iterations since the mode began: --crash-at-iteration and --hang-at-iteration count these. */
  modeIterations = 0;
  samples = 0;
  bytes = 0;
  waitTotalMs = 0;
  computeTotalMs = 0;
  private pending: { i: number; waitMs: number; receivedMs: number; samples: number; bytes: number } | null = null;

  constructor(
    private readonly writer: EventWriter | null,
    /** The mode now: DSA_MODE, then each block the control file switches to (one launch, several modes). */
    public mode: Mode | undefined,
  ) {}

  inMode(asked: Mode | undefined): boolean {
    return asked === undefined || asked === this.mode;
  }

  switchTo(mode: Mode): void {
    this.mode = mode;
    this.modeIterations = 0;
  }

  /** Writes the pending iteration's event, its compute ending at `endMs`. */
  record(endMs: number): void {
    const pending = this.pending;
    if (pending === null) return;
    const computeMs = endMs - pending.receivedMs;
    this.writer?.iter(pending.i, pending.waitMs, computeMs, pending.samples, pending.bytes);
    this.computeTotalMs += computeMs;
    this.pending = null;
  }

  received(batch: Batch, askedMs: number, receivedMs: number): void {
    this.pending = {
      i: this.iterations,
      waitMs: receivedMs - askedMs,
      receivedMs,
      samples: batch.samples,
      bytes: batch.bytes,
    };
    this.iterations++;
    this.modeIterations++;
    this.samples += batch.samples;
    this.bytes += batch.bytes;
    this.waitTotalMs += receivedMs - askedMs;
  }
}

/** The loop's own context: what it reads from and where it reports. */
interface LoopContext {
  options: JobOptions;
  loader: Loader;
  source: AsyncIterator<Batch>;
  writer: EventWriter | null;
  progress: Progress;
  budget: number;
  stop: StopFile;
  control: ControlFile;
}

/** The training loop: runs until the budget, the stop file or the data ends it (or a test's crash or hang). */
async function trainLoop({ options, loader, source, writer, progress, budget, stop, control }: LoopContext) {
  let yieldedMs = nowMs();
  for (;;) {
    const hangAt = progress.inMode(options.hangMode) ? options.hangAtIteration : undefined;
    if (hangAt !== undefined && progress.modeIterations >= hangAt) {
      progress.record(nowMs());
      process.stderr.write(
        `emulated job: hanging after ${progress.iterations} iterations as asked (--hang-at-iteration); only a ` +
          `signal ends it\n`,
      );
      writer?.flush();
      await hangForever();
    }
    if (progress.iterations >= budget) return 'budget';
    if (stop.requested()) return 'stop-file';
    const switched = control.poll();
    if (switched !== null) {
      writer?.block({ block: switched.block, mode: switched.mode, i: progress.iterations, inFlight: loader.inFlight });
      progress.switchTo(switched.mode);
    }
    const askedMs = nowMs();
    progress.record(askedMs);
    // Loader replies that came during the blocking compute are taken when the batch is not at hand yet: then the loop
    // waits, and the event loop runs.
    if (askedMs - yieldedMs >= YIELD_EVERY_MS) {
      await yieldToEventLoop();
      yieldedMs = nowMs();
    }
    const next = await source.next();
    if (next.done) return 'exhausted';
    const receivedMs = nowMs();
    blockUntil(receivedMs + options.computeMs);
    progress.received(next.value, askedMs, receivedMs);
    const crashAt = progress.inMode(options.crashMode) ? options.crashAtIteration : undefined;
    if (crashAt !== undefined && progress.modeIterations >= crashAt) {
      progress.record(nowMs());
      process.stderr.write(
        `emulated job: crashing after ${progress.iterations} iterations as asked (--crash-at-iteration)\n`,
      );
      writer?.close();
      await exitAfterWorkers(loader, CRASH_EXIT_CODE);
    }
  }
}

async function run(argv: readonly string[]): Promise<number> {
  const options = parseOptions(argv);
  const env = readProtocolEnv(process.env);
  const { files, restricted } = datasetFiles(options, env);
  const budget = options.iterations ?? env.iterations ?? Infinity;
  const epochs = options.epochs ?? (Number.isFinite(budget) ? Infinity : 1);
  // profile --workers: DSA_NUM_WORKERS overrides --workers, as the PyTorch hook overrides num_workers.
  const workers = env.numWorkers ?? options.workers;
  // Without workers a batch is read synchronously in the training loop; a GET cannot be.
  if (options.remoteBase && workers === 0) throw new UserError(EMULATOR_TEXT.remoteNeedsWorkers);
  const control = new ControlFile(env.controlFile);
  const writer = openWriter(options, env, workers, restricted);
  const stop = new StopFile(env.stopFile);
  let loaderToClose: Loader | undefined;
  const onSignal = (signal: NodeJS.Signals): void => {
    // Keep what was measured; no end event: the job did not finish its loop.
    writer?.close();
    void exitAfterWorkers(loaderToClose, signal === 'SIGINT' ? 130 : 143);
  };
  process.on('SIGTERM', onSignal);
  process.on('SIGINT', onSignal);
  const loader = startLoader(options, files, workers);
  loaderToClose = loader;
  const progress = new Progress(writer, env.mode);
  const source =
    env.controlFile !== undefined
      ? switchableBatches(loader, epochs, () => progress.mode)
      : env.mode === 'synthetic'
        ? syntheticBatches(loader)
        : loader.batches(epochs);

  const startMs = nowMs();
  let reason: EndReason;
  try {
    reason = await trainLoop({ options, loader, source, writer, progress, budget, stop, control });
    progress.record(nowMs());
  } catch (error) {
    writer?.end('error', progress.iterations);
    await loader.close();
    process.stderr.write(`emulated job: ${(error as Error).message}\n`);
    return 1;
  }
  writer?.end(reason, progress.iterations);
  await loader.close();
  const elapsedS = (nowMs() - startMs) / 1000;
  const { iterations, samples, bytes, waitTotalMs, computeTotalMs, mode } = progress;
  const per = Math.max(iterations, 1);
  process.stdout.write(
    `emulated job: ${iterations} iterations (${reason}), ${samples} samples, ${formatBytes(bytes)} read ` +
      `in ${elapsedS.toFixed(2)} s; ` +
      `per iteration: wait ${formatMs(waitTotalMs / per)} ms, compute ${formatMs(computeTotalMs / per)} ms` +
      `${mode ? ` (mode ${mode})` : ' (unprofiled)'}\n`,
  );
  return 0;
}

/**
 * Ends the process with `code` once the loader's worker threads are gone: Node 20 can abort (SIGABRT, exit 134) when
 * process.exit tears down a worker thread that is still running, and a test that asked for exit 42 saw 134.
 */
async function exitAfterWorkers(loader: Loader | undefined, code: number): Promise<never> {
  // A worker stuck in a system call cannot be terminated: exit anyway after a second.
  setTimeout(() => process.exit(code), 1000);
  await loader?.close();
  process.exit(code);
}

async function main(): Promise<void> {
  let code: number;
  try {
    code = await run(process.argv.slice(2));
  } catch (error) {
    if (error instanceof CommanderError) {
      code = error.exitCode === 0 ? 0 : 2;
    } else if (error instanceof UserError) {
      process.stderr.write(`emulated job: ${error.message}\n`);
      code = error.exitCode;
    } else {
      throw error;
    }
  }
  // Worker threads and timers are gone by now; exit explicitly so nothing left can hold the job.
  process.exit(code);
}

await main();
