import { spawn, execFile } from 'node:child_process';
import { mkdirSync, rmdirSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { cpuSeconds } from '../src/system/kernel/proc.js';
import { cgroupV2Mount, groupAt, socketCounterObstacle, SocketCounter } from '../src/system/network/socket-counter.js';

/**
 * The kernel socket counter's cost (the FUSE daemon's meter: an nftables
 * counter on a cgroup's received packets), against the same transfers
 * without it, measured in one run: the CPU of the origin and the client
 * (where the loopback packet path runs) with the counting table in place and
 * without, and the CPU of one reading (an `nft` run; the meter reads every
 * 0.5 s). Goal: under 2% of one CPU at 200 MB/s and 2,000 requests/s.
 * Needs root and nftables; says so and stops otherwise.
 */
const ORIGIN = fileURLToPath(new URL('./proxy-origin.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('./proxy-client.js', import.meta.url));
const run = promisify(execFile);
const READS_PER_SEC = 2;

const PHASES = [
  { name: 'bytes: 256 x 1 MiB', size: 1 << 20, count: 256, unit: 'MB' },
  { name: 'requests: 4,000 x 1 KiB', size: 1024, count: 4000, unit: 'request' },
] as const;
const CONCURRENCY = 8;
const ROUNDS = 5;

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

/** CPU ms of the origin and of the client (a reaped child of this process) over one transfer from inside `procs`. */
async function transfer(
  originPid: number,
  originPort: number,
  phase: (typeof PHASES)[number],
  procs: string,
): Promise<number> {
  const before = {
    origin: cpuSeconds(originPid)!,
    children: cpuSeconds('self')! - cpuSeconds('self', { ownOnly: true })!,
  };
  const args = [CLIENT, String(originPort), String(phase.size), String(phase.count), String(CONCURRENCY)];
  await run('sh', ['-c', `echo $$ > ${procs} && exec "$0" "$@"`, process.execPath, ...args]);
  const children = cpuSeconds('self')! - cpuSeconds('self', { ownOnly: true })!;
  return (cpuSeconds(originPid)! - before.origin + children - before.children) * 1000;
}

export async function bench(): Promise<void> {
  const obstacle = await socketCounterObstacle();
  if (obstacle) {
    console.log(`skipped: ${obstacle}`);
    return;
  }
  const group = groupAt(`/ds-analyzer-bench-${process.pid}`, cgroupV2Mount()!);
  mkdirSync(group.dir);
  const procs = join(group.dir, 'cgroup.procs');
  const origin = spawn(process.execPath, [ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const originPort = await new Promise<number>((resolve) =>
    origin.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  try {
    const costs: number[] = [];
    for (const phase of PHASES) {
      const without: number[] = [];
      const counted: number[] = [];
      const extra: number[] = [];
      const seen: number[] = [];
      await transfer(origin.pid!, originPort, phase, procs); // warm-up: JIT, connections
      for (let round = 0; round < ROUNDS; round++) {
        const plain = await transfer(origin.pid!, originPort, phase, procs);
        const counter = await SocketCounter.start([group]);
        const start = await counter.read();
        const withTable = await transfer(origin.pid!, originPort, phase, procs);
        seen.push((await counter.read()).payloadBytes - start.payloadBytes);
        await counter.close();
        without.push(plain);
        counted.push(withTable);
        extra.push(withTable - plain);
      }
      const units = phase.unit === 'MB' ? (phase.size * phase.count) / 1e6 : phase.count;
      const perUnit = median(extra) / units;
      costs.push(perUnit);
      console.log(
        `${phase.name}: origin + client CPU ${median(without).toFixed(0)} ms without the counter, ${median(counted).toFixed(0)} ms with it ` +
          `(extra ${median(extra).toFixed(1)} ms, rounds ${Math.min(...extra).toFixed(0)} to ${Math.max(...extra).toFixed(0)}) = ${perUnit.toFixed(4)} ms per ${phase.unit}; ` +
          `counted ${(median(seen) / (phase.size * phase.count)).toFixed(3)} of the body bytes (headers included)`,
      );
    }
    const counter = await SocketCounter.start([group]);
    const READS = 400;
    await counter.read();
    const readerCpu = () => cpuSeconds('self', { ownOnly: true })! + cpuSeconds(counter.readerPid!)!;
    const beforeReads = readerCpu();
    for (let k = 0; k < READS; k++) await counter.read();
    const readMs = ((readerCpu() - beforeReads) * 1000) / READS;
    await counter.close();
    console.log(
      `one reading (this process and its nft child): ${readMs.toFixed(2)} ms of CPU; the meter reads ${READS_PER_SEC} times a second`,
    );
    const [perMB, perRequest] = costs.map((c) => Math.max(0, c));
    const share = (perMB * 200 + perRequest * 2000 + readMs * READS_PER_SEC) / 1000;
    console.log(
      `projected: ${(share * 100).toFixed(2)}% of one CPU at 200 MB/s and 2,000 requests/s (goal: under 2%; a negative extra counts as 0)`,
    );
  } finally {
    origin.kill();
    await new Promise((resolve) => setTimeout(resolve, 200));
    rmdirSync(group.dir);
  }
}
