import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { test } from 'node:test';
import { ResourceSampleSchema } from '../../../src/schema/profile.js';
import { wholeDiskDevice } from '../../../src/system/kernel/block-device.js';
import { CpuLedger, totalCpuSec } from '../../../src/system/kernel/cpu-ledger.js';
import { meminfoBytes } from '../../../src/system/kernel/read-text.js';
import { cpuPercent, parseCpuTimes, parseDiskReadBytes, startSampler } from '../../../src/system/probes/samplers.js';

test('parseCpuTimes and cpuPercent: busy share of all jiffies, idle and iowait excluded', () => {
  const a = parseCpuTimes('cpu  100 0 100 700 100 0 0 0 0 0\ncpu0 1 2 3 4\n');
  const b = parseCpuTimes('cpu  200 0 200 1200 200 0 0 0 0 0\n');
  assert.deepEqual(a, { busy: 200, total: 1000 });
  assert.ok(b);
  assert.equal(cpuPercent(a!, b), 25);
  assert.equal(cpuPercent(b, b), 0);
  assert.equal(parseCpuTimes('intr 1 2 3'), null);
});

test('parseDiskReadBytes: sectors read x 512 of the device', () => {
  const text = ' 254       0 vda 1000 10 2048 300 5 0 8 1 0 0 0 0 0 0 0 0 0\n 254       1 vda1 1 0 8 0 0 0 0 0 0 0 0\n';
  assert.equal(parseDiskReadBytes(text, '254:0'), 2048 * 512);
  assert.equal(parseDiskReadBytes(text, '254:1'), 8 * 512);
  assert.equal(parseDiskReadBytes(text, '8:0'), null);
});

test('meminfoBytes reads the field named: Cached, not SwapCached; Active(file)', () => {
  assert.equal(meminfoBytes('MemTotal: 100 kB\nSwapCached:  7 kB\nCached:   2048 kB\n', 'Cached'), 2048 * 1024);
  assert.equal(meminfoBytes('MemTotal: 100 kB\n', 'Cached'), null);
  assert.equal(meminfoBytes('Active(anon): 1 kB\nActive(file):  3 kB\n', 'Active(file)'), 3 * 1024);
});

test('sampler records sane samples of a busy job tree, with GPU fields from a gpu sampler', async (t) => {
  // Own process group, so the busy subshell dies with it.
  const child = spawn('sh', ['-c', 'while :; do :; done & sleep 5; wait'], { stdio: 'ignore', detached: true });
  const killGroup = (): void => {
    try {
      process.kill(-child.pid!, 'SIGKILL');
    } catch {
      // already gone
    }
  };
  t.after(killGroup);
  const seen: number[] = [];
  const sampler = startSampler({
    rootPid: child.pid!,
    device: await wholeDiskDevice('/'),
    intervalMs: 100,
    gpu: {
      latest: () => ({ utilPct: 40, memBytes: 4e9, gpus: 2 }),
      readings: () => [
        { index: 0, utilPct: 30, memUsedBytes: 1e9, memTotalBytes: 8e10 },
        { index: 1, utilPct: 50, memUsedBytes: 3e9, memTotalBytes: 8e10 },
      ],
    },
    onSample: (s) => seen.push(s.t),
  });
  await sleep(700);
  const samples = sampler.stop();
  killGroup();
  assert.ok(samples.length >= 3, `only ${samples.length} samples`);
  assert.equal(seen.length, samples.length);
  for (const sample of samples) {
    ResourceSampleSchema.parse(sample);
    assert.ok(sample.cpuPct <= 100);
    assert.ok(sample.pageCacheBytes > 0);
    assert.equal(sample.gpuUtilPct, 40);
    assert.equal(sample.gpuMemBytes, 4e9);
    assert.deepEqual(sample.gpus, [
      { index: 0, utilPct: 30, memBytes: 1e9 },
      { index: 1, utilPct: 50, memBytes: 3e9 },
    ]);
  }
  const last = samples.at(-1)!;
  assert.equal(last.jobProcesses, 3); // sh, the busy subshell, sleep
  assert.ok(last.jobCpuSec > 0.05, `job cpu ${last.jobCpuSec}`);
  assert.ok(Math.max(...samples.map((s) => s.cpuPct)) > 10, 'a busy loop shows in machine CPU');
  for (let i = 1; i < samples.length; i++) {
    assert.ok(samples[i].jobCpuSec >= samples[i - 1].jobCpuSec);
    assert.ok(samples[i].t >= samples[i - 1].t);
  }
  assert.equal(sampler.stop().length, samples.length, 'stop is idempotent');
});

test('sampler without a root reports no job until setRoot, and omits GPU fields without a gpu sampler', async () => {
  const sampler = startSampler({ rootPid: null, device: null, intervalMs: 50 });
  await sleep(130);
  const before = sampler.samples();
  assert.ok(before.length >= 1);
  assert.equal(before[0].jobProcesses, 0);
  assert.equal(before[0].diskReadBytesPerSec, 0);
  assert.equal('gpuUtilPct' in before[0], false);
  sampler.setRoot(process.pid);
  const after = sampler.stop().at(-1)!;
  assert.ok(after.jobProcesses >= 1);
  assert.ok(after.jobCpuSec > 0);
});

test('sampler charges each sample to the ledger as sampler, and nothing else', async () => {
  let cpu = 0;
  const ledger = new CpuLedger(() => (cpu += 0.001));
  const sampler = startSampler({ rootPid: process.pid, device: null, intervalMs: 40, ledger });
  await sleep(150);
  const samples = sampler.stop();
  const reading = ledger.reading();
  assert.equal(reading.sampler.calls, samples.length, 'one charge per sample, the last one at stop included');
  assert.ok(Math.abs(reading.sampler.cpuSec - 0.001 * samples.length) < 1e-9);
  assert.equal(totalCpuSec(reading), reading.sampler.cpuSec);
});

test('a sampler without a period samples only when ticked (the caller owns the wake-up), and not after stop', async () => {
  const sampler = startSampler({ rootPid: process.pid, device: null, intervalMs: null });
  await sleep(120);
  assert.equal(sampler.samples().length, 0, 'no timer of its own');
  sampler.tick();
  sampler.tick();
  assert.equal(sampler.samples().length, 2);
  const all = sampler.stop();
  assert.equal(all.length, 3, 'stop takes the final sample');
  sampler.tick();
  assert.equal(sampler.samples().length, 3, 'a tick after stop takes nothing');
});
