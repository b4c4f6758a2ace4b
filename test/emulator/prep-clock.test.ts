import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { threadCpuClock } from '../../src/emulator/prep-clock.js';

test("the thread CPU clock counts this thread's work, never more than the wall time, and not sleep", async () => {
  const cpu = threadCpuClock();
  // The kernel brings the count up to date at each scheduler tick (4 ms at
  // HZ=250), so a read may lag the thread's true CPU time by up to a tick.
  // Start right after the count moves, when the lag is near zero; otherwise
  // the spin below ends up to a tick early.
  const stale = cpu();
  while (cpu() === stale) {
    // spin to the next update
  }
  const cpuStart = cpu();
  const wallStart = performance.now();
  while (cpu() - cpuStart < 30) {
    // spin: 30 ms of this thread's CPU time
  }
  const wall = performance.now() - wallStart;
  assert.ok(wall >= 29, `30 ms of one thread's CPU took at least as long on the wall clock (${wall.toFixed(1)} ms)`);
  // Node's own work can fall in one sleep on a loaded runner; the least of three is far under the 60 ms slept.
  const sleptCpu: number[] = [];
  for (let attempt = 0; attempt < 3; attempt++) {
    const beforeSleep = cpu();
    await sleep(60);
    sleptCpu.push(cpu() - beforeSleep);
  }
  assert.ok(
    Math.min(...sleptCpu) < 10,
    `60 ms sleeps used ${sleptCpu.map((ms) => ms.toFixed(2)).join(', ')} ms of CPU`,
  );
});
