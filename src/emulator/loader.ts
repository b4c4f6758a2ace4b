import { once } from 'node:events';
import { Worker } from 'node:worker_threads';
import type { PrepClock } from './prep-clock.js';
import { mixSeed, mulberry32, permutation } from '../random.js';
import { prepareBatch, type PreparedBatch } from './prep.js';

/**
 * An emulation of torch.utils.data.DataLoader over worker threads, iterated once over a repeating sampler (as training
 * loops that count steps, not epochs, do):
 * - each epoch, a fresh seeded permutation of the files is cut into batches (the last one may be short, as with
 *   drop_last=False), and the epochs follow each other in one stream of batches numbered from 0;
 * - batch k of the stream goes to worker k mod W, which builds the whole batch;
 * - prefetchFactor * W batches are in flight, and one more is dispatched each time a batch is handed to the training
 *   loop (DataLoader's _try_put_index), across epoch boundaries too: the pipeline never drains between epochs, so the
 *   settings alone set the pace (./expected.ts);
 * - batches are delivered in order, whichever worker finishes first.
 * With 0 workers, batches are built in the training loop's thread on demand (num_workers=0).
 */

/** Options of the loader. */
export interface LoaderOptions {
  /** Paths of the sample files. */
  files: readonly string[];
  /** Samples per batch. */
  batchSize: number;
  /** Worker threads; 0 builds batches in the calling thread. */
  workers: number;
  /** Batches in flight per worker. */
  prefetchFactor: number;
  /** Pre-processing time per sample, ms. */
  prepMs: number;
  /** Clock the prep time is counted on (default wall). */
  prepClock?: PrepClock;
  /** Seed of the epoch permutations. */
  seed: number;
  /**
   * Called once when decoding alone systematically takes longer than prepMs (in over a quarter of at least 8 samples:
   * single spikes on a busy machine do not count).
   */
  onDecodeOverrun?: (overrun: DecodeOverrun) => void;
  /** Called as each batch is sent to a worker (for tests: what is in flight when). */
  onDispatch?: (dispatch: Dispatch) => void;
}

/** A batch sent to a worker. */
export interface Dispatch {
  /** Number of the batch in the stream, from 0. */
  seq: number;
  /** Epoch of the batch, from 0. */
  epoch: number;
  /** Index of the batch within its epoch. */
  index: number;
  /** Worker the batch went to. */
  worker: number;
  /** Files of the batch. */
  paths: readonly string[];
}

/** Samples whose decoding alone exceeded prepMs, so far. */
export interface DecodeOverrun {
  /** Samples that took longer than asked. */
  overruns: number;
  /** Samples prepared so far. */
  samples: number;
  /** Mean decode time per sample so far, ms. */
  meanDecodeMs: number;
}

/** A batch as the training loop receives it. */
export interface Batch extends PreparedBatch {
  /** Number of the batch in the stream, from 0. */
  seq: number;
  /** Epoch of the batch, from 0. */
  epoch: number;
  /** Index of the batch within its epoch. */
  index: number;
  /**
   * Files of the same worker's later batches whose reads had started when this batch was prepared: reading overlapped
   * preparing. Always 0 without workers.
   */
  readAheadFiles: number;
}

/** Message to a worker: build this batch. */
export interface WorkerRequest {
  /** Number of the batch in the stream. */
  seq: number;
  /** Epoch of the batch. */
  epoch: number;
  /** Index of the batch within the epoch. */
  index: number;
  /** Files of the batch. */
  paths: string[];
  /** Pre-processing time per sample, ms. */
  prepMs: number;
}

/** Message to a worker: finish the sample at hand, take no more, and exit. */
export const STOP_MESSAGE = 'stop';

/** How long a worker may take to stop by itself before it is terminated. */
const WORKER_STOP_TIMEOUT_MS = 5000;

async function stopWorker(worker: Worker): Promise<void> {
  if (worker.threadId === -1) return; // already exited
  const exited = once(worker, 'exit');
  worker.postMessage(STOP_MESSAGE);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<'late'>((resolve) => (timer = setTimeout(() => resolve('late'), WORKER_STOP_TIMEOUT_MS)));
  const outcome = await Promise.race([exited, late]);
  clearTimeout(timer);
  if (outcome === 'late') await worker.terminate();
}

/** Message from a worker: a built batch, or why it could not be built. */
export type WorkerReply =
  | ({ type: 'batch'; seq: number; epoch: number; index: number; readAheadFiles: number } & PreparedBatch)
  | { type: 'error'; seq: number; epoch: number; index: number; message: string };

/** The batches of one epoch, as lists of file indices. */
export function planEpoch(fileCount: number, batchSize: number, seed: number, epoch: number): number[][] {
  const order = permutation(fileCount, mulberry32(mixSeed(seed, epoch)));
  const batches: number[][] = [];
  for (let start = 0; start < order.length; start += batchSize) batches.push(order.slice(start, start + batchSize));
  return batches;
}

interface Waiter {
  seq: number;
  resolve: (batch: Batch) => void;
  reject: (error: Error) => void;
}

export class Loader {
  private readonly workers: Worker[];
  /** Replies that came before their turn: a batch, or why it could not be built. */
  private readonly ready = new Map<number, Batch | Error>();
  /** Plan of the epoch being dispatched (batches are dispatched in order). */
  private plan: { epoch: number; batches: number[][] } | undefined;
  private streaming = false;
  private waiter: Waiter | undefined;
  private failure: Error | undefined;
  private closed = false;
  private overrunReported = false;
  private preparedSamples = 0;
  private overruns = 0;
  private decodeMs = 0;
  /** Batches dispatched to workers, and handed to the loop: their difference is in flight. */
  private dispatched = 0;
  private handed = 0;

  private constructor(private readonly options: LoaderOptions) {
    if (options.files.length === 0) throw new RangeError('Loader: no files');
    this.workers = Array.from({ length: options.workers }, () => {
      const worker = new Worker(new URL('./worker.js', import.meta.url), {
        workerData: { prepClock: options.prepClock ?? 'wall' },
      });
      worker.on('message', (reply: WorkerReply) => this.onReply(reply));
      worker.on('error', (error) => this.fail(new Error(`loader worker failed: ${error.message}`)));
      worker.on('exit', (code) => {
        if (!this.closed) this.fail(new Error(`loader worker exited unexpectedly with code ${code}`));
      });
      return worker;
    });
  }

  /** Starts the worker threads. */
  static start(options: LoaderOptions): Loader {
    return new Loader(options);
  }

  /**
   * Batches handed to workers and not yet to the training loop (a switch of mode: they were prepared under the old
   * state).
   */
  get inFlight(): number {
    return this.dispatched - this.handed;
  }

  /** Number of batches in an epoch. */
  get batchesPerEpoch(): number {
    return Math.ceil(this.options.files.length / this.options.batchSize);
  }

  /**
   * The batches of `epochs` epochs (unbounded by default) as one stream, in order; `limit` stops after that many
   * batches and dispatches no more (synthetic mode asks for one). A loader is iterated once, like a DataLoader over an
   * infinite sampler.
   */
  async *batches(epochs = Infinity, limit = Infinity): AsyncGenerator<Batch> {
    if (this.streaming) throw new Error('Loader.batches: a loader is iterated once');
    this.streaming = true;
    const perEpoch = this.batchesPerEpoch;
    const total = Math.min(epochs * perEpoch, limit);
    if (this.workers.length === 0) {
      for (let seq = 0; seq < total; seq++) {
        const { epoch, index, paths } = this.locate(seq);
        const prepared = prepareBatch(paths, this.options.prepMs);
        this.checkOverrun(prepared);
        yield { seq, epoch, index, readAheadFiles: 0, ...prepared };
      }
      return;
    }
    const inFlight = this.options.prefetchFactor * this.workers.length;
    let sent = 0;
    const dispatch = (upTo: number): void => {
      for (; sent < Math.min(upTo, total); sent++) {
        const { epoch, index, paths } = this.locate(sent);
        const worker = sent % this.workers.length;
        const request: WorkerRequest = { seq: sent, epoch, index, paths, prepMs: this.options.prepMs };
        this.workers[worker].postMessage(request);
        this.options.onDispatch?.({ seq: sent, epoch, index, worker, paths });
      }
      this.dispatched = sent;
    };
    dispatch(inFlight);
    for (let seq = 0; seq < total; seq++) {
      const batch = await this.receive(seq);
      // Handing a batch over frees a slot: the next batch is dispatched before the loop computes.
      dispatch(seq + 1 + inFlight);
      this.handed = seq + 1;
      yield batch;
    }
  }

  /**
   * Stops the worker threads. Idempotent. Each worker is asked to stop after the sample it is preparing and exits by
   * itself; Worker.terminate() is the fallback only, since Node 20 aborts the whole process (SIGABRT) when it
   * interrupts a worker inside zlib.
   */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.workers.map((worker) => stopWorker(worker)));
  }

  /** Where batch `seq` of the stream comes from. */
  private locate(seq: number): { epoch: number; index: number; paths: string[] } {
    const perEpoch = this.batchesPerEpoch;
    const epoch = Math.floor(seq / perEpoch);
    const index = seq % perEpoch;
    if (this.plan?.epoch !== epoch) {
      this.plan = {
        epoch,
        batches: planEpoch(this.options.files.length, this.options.batchSize, this.options.seed, epoch),
      };
    }
    return { epoch, index, paths: this.plan.batches[index].map((file) => this.options.files[file]) };
  }

  private receive(seq: number): Promise<Batch> {
    if (this.failure) return Promise.reject(this.failure);
    const batch = this.ready.get(seq);
    if (batch !== undefined) {
      this.ready.delete(seq);
      return batch instanceof Error ? Promise.reject(batch) : Promise.resolve(batch);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { seq, resolve, reject };
    });
  }

  private onReply(reply: WorkerReply): void {
    let batch: Batch | Error;
    if (reply.type === 'error') {
      // Raised when the loop reaches this batch, as a DataLoader re-raises a worker's exception in order.
      batch = new Error(`loader worker could not build batch ${reply.index} of epoch ${reply.epoch}: ${reply.message}`);
    } else {
      const { type: _type, ...rest } = reply;
      batch = rest;
      this.checkOverrun(batch);
    }
    if (this.waiter !== undefined && this.waiter.seq === reply.seq) {
      const waiter = this.waiter;
      this.waiter = undefined;
      if (batch instanceof Error) waiter.reject(batch);
      else waiter.resolve(batch);
    } else {
      this.ready.set(reply.seq, batch);
    }
  }

  private checkOverrun(batch: PreparedBatch): void {
    this.preparedSamples += batch.samples;
    this.overruns += batch.overruns;
    this.decodeMs += batch.decodeMs;
    if (this.overrunReported || this.preparedSamples < 8 || this.overruns * 4 <= this.preparedSamples) return;
    this.overrunReported = true;
    this.options.onDecodeOverrun?.({
      overruns: this.overruns,
      samples: this.preparedSamples,
      meanDecodeMs: this.decodeMs / this.preparedSamples,
    });
  }

  private fail(error: Error): void {
    if (this.closed || this.failure) return;
    this.failure = error;
    const waiter = this.waiter;
    this.waiter = undefined;
    waiter?.reject(error);
  }
}
