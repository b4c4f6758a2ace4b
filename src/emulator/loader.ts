import { Worker } from 'node:worker_threads';
import { mixSeed, mulberry32, permutation } from './rng.js';
import { prepareBatch, type PreparedBatch } from './prep.js';

/**
 * An emulation of torch.utils.data.DataLoader over worker threads:
 * - each epoch, a fresh seeded permutation of the files is cut into batches
 *   (the last one may be short, as with drop_last=False);
 * - batch k of an epoch goes to worker k mod W, which builds the whole batch;
 * - prefetchFactor * W batches are in flight, and one more is dispatched each
 *   time a batch is handed to the training loop (DataLoader's _try_put_index);
 * - batches are delivered in order, whichever worker finishes first.
 * Workers persist across epochs (persistent_workers=True), but, as with a new
 * DataLoader iterator, the pipeline refills at the start of every epoch.
 * With 0 workers, batches are built in the training loop's thread on demand
 * (num_workers=0).
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
  /** Pre-processing wall-clock time per sample, ms. */
  prepMs: number;
  /** Seed of the epoch permutations. */
  seed: number;
  /**
   * Called once when decoding alone systematically takes longer than prepMs (in
   * over a quarter of at least 8 samples: single spikes on a busy machine do not count).
   */
  onDecodeOverrun?: (overrun: DecodeOverrun) => void;
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
  /** Epoch of the batch, from 0. */
  epoch: number;
  /** Index of the batch within its epoch. */
  index: number;
}

/** Message to a worker: build this batch. */
export interface WorkerRequest {
  /** Epoch of the batch. */
  epoch: number;
  /** Index of the batch within the epoch. */
  index: number;
  /** Files of the batch. */
  paths: string[];
  /** Pre-processing time per sample, ms. */
  prepMs: number;
}

/** Message from a worker: a built batch, or why it could not be built. */
export type WorkerReply =
  | ({ type: 'batch'; epoch: number; index: number } & PreparedBatch)
  | { type: 'error'; epoch: number; index: number; message: string };

/** The batches of one epoch, as lists of file indices. */
export function planEpoch(fileCount: number, batchSize: number, seed: number, epoch: number): number[][] {
  const order = permutation(fileCount, mulberry32(mixSeed(seed, epoch)));
  const batches: number[][] = [];
  for (let start = 0; start < order.length; start += batchSize) batches.push(order.slice(start, start + batchSize));
  return batches;
}

interface Waiter {
  index: number;
  resolve: (batch: Batch) => void;
  reject: (error: Error) => void;
}

export class Loader {
  private readonly workers: Worker[];
  private readonly ready = new Map<number, Batch>();
  private currentEpoch = -1;
  private waiter: Waiter | undefined;
  private failure: Error | undefined;
  private closed = false;
  private overrunReported = false;
  private preparedSamples = 0;
  private overruns = 0;
  private decodeMs = 0;

  private constructor(private readonly options: LoaderOptions) {
    if (options.files.length === 0) throw new RangeError('Loader: no files');
    this.workers = Array.from({ length: options.workers }, () => {
      const worker = new Worker(new URL('./worker.js', import.meta.url));
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

  /** Number of batches in an epoch. */
  get batchesPerEpoch(): number {
    return Math.ceil(this.options.files.length / this.options.batchSize);
  }

  /**
   * The batches of one epoch, in order; `limit` stops after that many (synthetic
   * mode asks for one, and no more are dispatched).
   */
  async *epoch(epoch: number, limit = Infinity): AsyncGenerator<Batch> {
    const plan = planEpoch(this.options.files.length, this.options.batchSize, this.options.seed, epoch);
    const total = Math.min(plan.length, limit);
    const paths = (index: number): string[] => plan[index].map((file) => this.options.files[file]);
    if (this.workers.length === 0) {
      for (let index = 0; index < total; index++) {
        const prepared = prepareBatch(paths(index), this.options.prepMs);
        this.checkOverrun(prepared);
        yield { epoch, index, ...prepared };
      }
      return;
    }
    this.currentEpoch = epoch;
    this.ready.clear();
    const inFlight = this.options.prefetchFactor * this.workers.length;
    let sent = 0;
    const dispatch = (upTo: number): void => {
      for (; sent < Math.min(upTo, total); sent++) {
        const request: WorkerRequest = { epoch, index: sent, paths: paths(sent), prepMs: this.options.prepMs };
        this.workers[sent % this.workers.length].postMessage(request);
      }
    };
    dispatch(inFlight);
    for (let index = 0; index < total; index++) {
      const batch = await this.receive(index);
      // Handing a batch over frees a slot: the next batch is dispatched before the loop computes.
      dispatch(index + 1 + inFlight);
      yield batch;
    }
  }

  /** Terminates the worker threads. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await Promise.all(this.workers.map((worker) => worker.terminate()));
  }

  private receive(index: number): Promise<Batch> {
    if (this.failure) return Promise.reject(this.failure);
    const batch = this.ready.get(index);
    if (batch !== undefined) {
      this.ready.delete(index);
      return Promise.resolve(batch);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { index, resolve, reject };
    });
  }

  private onReply(reply: WorkerReply): void {
    // Replies of an epoch the loop abandoned are dropped.
    if (reply.epoch !== this.currentEpoch) return;
    if (reply.type === 'error') {
      this.fail(new Error(`loader worker could not build batch ${reply.index} of epoch ${reply.epoch}: ${reply.message}`));
      return;
    }
    const { type: _type, ...rest } = reply;
    const batch: Batch = rest;
    this.checkOverrun(batch);
    if (this.waiter !== undefined && this.waiter.index === batch.index) {
      const waiter = this.waiter;
      this.waiter = undefined;
      waiter.resolve(batch);
    } else {
      this.ready.set(batch.index, batch);
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
