// The reader child of cold-keeper.bench.ts: a stand-in for a training job's
// loader. Reads the listed files whole, in a random order per epoch, at a
// steady pace, and prints what it consumed and what it read from storage
// (/proc/self/io read_bytes), counted from its first read so that Node's own
// start-up reads are left out.
//
//   node dist/bench/cold-keeper-reader.js LIST_FILE FILES_PER_SEC SECONDS
import fs from 'node:fs';

const [listFile, rateArg, secondsArg] = process.argv.slice(2);
const files = fs.readFileSync(listFile, 'utf8').split('\n').filter(Boolean);
const filesPerSec = Number(rateArg);
const seconds = Number(secondsArg);

function readBytes(): number {
  return Number(/^read_bytes:\s*(\d+)/m.exec(fs.readFileSync('/proc/self/io', 'utf8'))?.[1] ?? NaN);
}

function shuffled(count: number): number[] {
  const order = Array.from({ length: count }, (_, i) => i);
  for (let i = count - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  return order;
}

const TICK_MS = 10;
const buffer = Buffer.allocUnsafe(1 << 20);
let order = shuffled(files.length);
let next = 0;
let epochs = 1;
let reads = 0;
let consumedBytes = 0;
const storageBefore = readBytes();
const started = performance.now();
while (performance.now() - started < seconds * 1000) {
  const due = Math.floor(((performance.now() - started) / 1000) * filesPerSec);
  while (reads < due) {
    if (next === order.length) {
      order = shuffled(files.length);
      next = 0;
      epochs++;
    }
    const fd = fs.openSync(files[order[next++]], 'r');
    for (
      let n = fs.readSync(fd, buffer, 0, buffer.length, null);
      n > 0;
      n = fs.readSync(fd, buffer, 0, buffer.length, null)
    ) {
      consumedBytes += n;
    }
    fs.closeSync(fd);
    reads++;
  }
  await new Promise((resolve) => setTimeout(resolve, TICK_MS));
}
const storageReadBytes = readBytes() - storageBefore;
console.log(
  JSON.stringify({ reads, epochs, consumedBytes, storageReadBytes, wallSec: (performance.now() - started) / 1000 }),
);
