import { parentPort, workerData } from 'node:worker_threads';
import { BatchAccumulator, prepareData, readBatch, usePrepClock } from './prep.js';
import type { PrepClock } from './prep-clock.js';
import { STOP_MESSAGE, type WorkerRequest, type WorkerReply } from './loader.js';

// A loader worker thread. Its batches are prepared one at a time in the order they were asked for, like a DataLoader
// worker's index queue, but the files of every queued batch are read as soon as it is asked for: the reads run in
// libuv's threadpool while this thread prepares the batch before it. So storage stays busy whenever a worker has a
// batch queued, and a throttled disk alone sets the pace when it is the slowest stage (see ./expected.ts).
if (parentPort === null) throw new Error('emulator worker must run in a worker thread');
const port = parentPort;
usePrepClock((workerData as { prepClock?: PrepClock } | null)?.prepClock ?? 'wall');

interface Queued {
  request: WorkerRequest;
  /** The batch's files, or why they could not be read. */
  reads: Promise<Buffer[] | Error>;
  /** Whether the reads have finished. */
  readsDone: boolean;
}

const queue: Queued[] = [];
let draining = false;
// Files whose reads this worker has started, and files of the batches it has prepared.
let readsStarted = 0;
let filesDone = 0;
// Deadline of the previous sample while the worker goes straight on from it (see prepareData).
let carryMs: number | undefined;

function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

function enqueue(request: WorkerRequest): void {
  readsStarted += request.paths.length;
  const queued: Queued = {
    request,
    reads: readBatch(request.paths).catch((error: unknown) => error as Error),
    readsDone: false,
  };
  void queued.reads.then(() => (queued.readsDone = true));
  queue.push(queued);
}

// Set by the loader's stop message: the worker finishes the sample at hand and exits.
let stopping = false;

port.on('message', (message: WorkerRequest | typeof STOP_MESSAGE) => {
  if (message === STOP_MESSAGE) {
    stopping = true;
    queue.length = 0;
    // Closing the port lets the thread exit once the reads already started have returned.
    port.close();
    return;
  }
  enqueue(message);
  if (!draining) void drain();
});

async function drain(): Promise<void> {
  draining = true;
  while (queue.length > 0) {
    const { request, reads, readsDone } = queue[0];
    // A worker that waits for storage is idle: its next sample's time starts afresh.
    if (!readsDone) carryMs = undefined;
    const data = await reads;
    let reply: WorkerReply;
    try {
      if (data instanceof Error) throw data;
      const batch = new BatchAccumulator(request.prepMs);
      for (let i = 0; i < data.length; i++) {
        // Between samples, take requests that arrived meanwhile, so that their reads start now.
        if (i > 0) await yieldToEventLoop();
        if (stopping) return;
        const sample = prepareData(data[i], request.prepMs, carryMs);
        carryMs = sample.deadlineMs;
        batch.add(sample);
      }
      filesDone += request.paths.length;
      reply = {
        type: 'batch',
        seq: request.seq,
        epoch: request.epoch,
        index: request.index,
        readAheadFiles: readsStarted - filesDone,
        ...batch.result(),
      };
    } catch (error) {
      reply = {
        type: 'error',
        seq: request.seq,
        epoch: request.epoch,
        index: request.index,
        message: (error as Error).message,
      };
    }
    if (stopping) return;
    queue.shift();
    port.postMessage(reply);
    await yieldToEventLoop();
  }
  // Nothing asked for: idle until the next request.
  carryMs = undefined;
  draining = false;
}
