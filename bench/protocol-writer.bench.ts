import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { pathToFileURL } from 'node:url';
import { EventWriter, StopFile } from '../src/protocol/writer.js';

/**
 * Per-iteration cost of the job-side protocol: EventWriter.iter plus the stop-file
 * check, against the same timing loop without them, in one run. Rounds alternate
 * between the two loops and the median round counts, so a noisy neighbour on a
 * 2-core machine hits both alike.
 */

const ITERATIONS = 200_000;
const ROUNDS = 5;

function loop(
  iterations: number,
  writer: EventWriter | undefined,
  stop: StopFile | undefined,
): { ms: number; sink: number } {
  let sink = 0;
  const startMs = performance.now();
  for (let i = 0; i < iterations; i++) {
    // What an instrumented training loop does anyway: take times around next() and compute.
    const askedMs = performance.now();
    const receivedMs = performance.now();
    const doneMs = performance.now();
    sink += receivedMs - askedMs + (doneMs - receivedMs);
    if (writer !== undefined) {
      writer.iter(i, receivedMs - askedMs, doneMs - receivedMs, 32, 4_194_304);
      if (stop!.requested()) break;
    }
  }
  return { ms: performance.now() - startMs, sink };
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}

export async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-bench-writer-'));
  try {
    const baseMs: number[] = [];
    const withMs: number[] = [];
    // Warm-up so both loops are optimised before they are timed.
    loop(20_000, undefined, undefined);
    const warm = EventWriter.open({ dir, mode: 'cached', pid: 1, flushOnExit: false });
    loop(20_000, warm, new StopFile(join(dir, 'stop')));
    warm.end('budget', 20_000);
    for (let round = 0; round < ROUNDS; round++) {
      baseMs.push(loop(ITERATIONS, undefined, undefined).ms);
      const writer = EventWriter.open({ dir, mode: 'cached', pid: 2 + round, flushOnExit: false });
      withMs.push(loop(ITERATIONS, writer, new StopFile(join(dir, 'stop'))).ms);
      writer.end('budget', ITERATIONS);
    }
    const baseUs = (median(baseMs) * 1000) / ITERATIONS;
    const withUs = (median(withMs) * 1000) / ITERATIONS;
    process.stdout.write(
      `protocol-writer: ${ITERATIONS} iterations x ${ROUNDS} rounds (median round)\n` +
        `  loop without events:        ${baseUs.toFixed(3)} us/iteration\n` +
        `  loop with iter + stop check: ${withUs.toFixed(3)} us/iteration\n` +
        `  cost of the protocol:        ${(withUs - baseUs).toFixed(3)} us/iteration (ratio ${(withUs / baseUs).toFixed(2)}x)\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
