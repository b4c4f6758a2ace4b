// A light job for bench/setup-scale: each iteration reads a batch of random
// 1 KiB files of the cold-keeper generator's layout (c0000/0.bin ...) and
// spends a fixed compute time; speaks the event protocol through the writer,
// switching modes when the CLI asks (one launch, as the hook's jobs do).
//
//   node dist/bench/setup-scale-job.js DIR FILES [BATCH] [COMPUTE_MS]
import { closeSync, openSync, readSync } from 'node:fs';
import { join } from 'node:path';
import { ENV } from '../src/schema/events.js';
import { ControlFile, StopFile, fromEnv } from '../src/protocol/writer.js';

const FILES_PER_DIR = 1280;
const [dir, filesText, batchText = '32', computeText = '5'] = process.argv.slice(2);
const files = Number(filesText);
const batch = Number(batchText);
const computeMs = Number(computeText);
let mode = process.env[ENV.mode];
const control = new ControlFile(process.env[ENV.controlFile]);
const writer = fromEnv(process.env, {
  batchSize: batch,
  workers: 0,
  source: 'bench',
  ...(control.path !== undefined ? { switchModes: true } : {}),
});
const stop = new StopFile(process.env[ENV.stopFile]);
const budget = Number(process.env[ENV.iterations] ?? 1e9);
const buffer = Buffer.allocUnsafe(64 * 1024);
let seed = 12345;
const random = (): number => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};
const busy = (ms: number): void => {
  const until = performance.now() + ms;
  while (performance.now() < until);
};
let i = 0;
for (; i < budget && !stop.requested(); i++) {
  const switched = control.poll();
  if (switched !== null) {
    writer?.block({ block: switched.block, mode: switched.mode, i, inFlight: 0 }); // reads in the loop: nothing in flight
    mode = switched.mode;
  }
  const started = performance.now();
  let bytes = 0;
  if (mode !== 'synthetic' || i === 0) {
    for (let k = 0; k < batch; k++) {
      const index = Math.floor(random() * files);
      const fd = openSync(
        join(dir, `c${String(Math.floor(index / FILES_PER_DIR)).padStart(4, '0')}`, `${index}.bin`),
        'r',
      );
      bytes += readSync(fd, buffer, 0, buffer.length, 0);
      closeSync(fd);
    }
  }
  const fetched = performance.now();
  busy(computeMs);
  writer?.iter(i, fetched - started, performance.now() - fetched, batch, bytes || undefined);
}
writer?.end(stop.requested() ? 'stop-file' : 'budget', i);
writer?.close();
