import { parentPort } from 'node:worker_threads';
import { prepareBatch } from './prep.js';
import type { WorkerRequest, WorkerReply } from './loader.js';

// A loader worker thread. Requests are handled synchronously one at a time, so a
// worker's queue of batches is processed in order, like a DataLoader worker's index queue.
if (parentPort === null) throw new Error('emulator worker must run in a worker thread');
const port = parentPort;

port.on('message', (request: WorkerRequest) => {
  let reply: WorkerReply;
  try {
    reply = { type: 'batch', epoch: request.epoch, index: request.index, ...prepareBatch(request.paths, request.prepMs) };
  } catch (error) {
    reply = { type: 'error', epoch: request.epoch, index: request.index, message: (error as Error).message };
  }
  port.postMessage(reply);
});
