import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';
import { MeteringProxy } from '../src/system/network/metering-proxy.js';

/**
 * The metering proxy's own CPU per MB and per request (remote data: every
 * byte the job fetches passes through it), against the same transfers
 * without the proxy, measured in one run. The origin and the client run in
 * processes of their own, so the CPU counted here (this process's) is the
 * proxy's. Goal: under 2% of one CPU at 200 MB/s and 2,000 requests/s.
 */
const ORIGIN = fileURLToPath(new URL('./proxy-origin.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('./proxy-client.js', import.meta.url));
const run = promisify(execFile);

interface Phase {
  name: string;
  size: number;
  count: number;
}

const PHASES: Phase[] = [
  { name: 'bytes: 256 x 1 MiB', size: 1 << 20, count: 256 },
  { name: 'requests: 4,000 x 1 KiB', size: 1024, count: 4000 },
];
const CONCURRENCY = 8;
const ROUNDS = 3;

async function client(originPort: number, phase: Phase, proxyPort: number | null): Promise<number> {
  const args = [
    CLIENT,
    String(originPort),
    String(phase.size),
    String(phase.count),
    String(CONCURRENCY),
    ...(proxyPort ? [String(proxyPort)] : []),
  ];
  const { stdout } = await run(process.execPath, args);
  return Number(stdout.trim());
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

export async function bench(): Promise<void> {
  const origin = spawn(process.execPath, [ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const originPort = await new Promise<number>((resolve) =>
    origin.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  const proxy = await MeteringProxy.start({
    port: 0,
    dataOrigins: [`127.0.0.1:${originPort}`],
    bytesPerSec: null,
    cache: null,
    cacheUse: 'pass',
  });
  const proxyPort = Number(new URL(proxy.url).port);
  try {
    const perPhase: { cpuMsPerUnit: number; unit: string }[] = [];
    for (const phase of PHASES) {
      const direct: number[] = [];
      const through: number[] = [];
      const cpuMs: number[] = [];
      await client(originPort, phase, proxyPort); // warm-up: JIT, connections
      for (let round = 0; round < ROUNDS; round++) {
        direct.push(await client(originPort, phase, null));
        const before = process.cpuUsage();
        through.push(await client(originPort, phase, proxyPort));
        const used = process.cpuUsage(before);
        cpuMs.push((used.user + used.system) / 1000);
      }
      const bytesMB = (phase.size * phase.count) / 1e6;
      const cpu = median(cpuMs);
      const unit = phase.size >= 1 << 20 ? 'MB' : 'request';
      const cpuMsPerUnit = unit === 'MB' ? cpu / bytesMB : cpu / phase.count;
      perPhase.push({ cpuMsPerUnit, unit });
      console.log(
        `${phase.name}: direct ${median(direct).toFixed(0)} ms, through the proxy ${median(through).toFixed(0)} ms ` +
          `(x${(median(through) / median(direct)).toFixed(2)}); proxy CPU ${cpu.toFixed(0)} ms = ${cpuMsPerUnit.toFixed(3)} ms per ${unit}`,
      );
    }
    // Per MB from the bytes phase (its request overhead is small), per request from the small-object phase.
    const [perMB, perRequest] = perPhase.map((p) => p.cpuMsPerUnit);
    const share = (perMB * 200 + perRequest * 2000) / 1000;
    console.log(`projected: ${(share * 100).toFixed(1)}% of one CPU at 200 MB/s and 2,000 requests/s (goal: under 2%)`);
  } finally {
    await proxy.close();
    origin.kill();
  }
}
