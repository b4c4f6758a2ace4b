import { spawn, execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

/**
 * The cold mode's meter for remote data when it counts in the job's own HTTP clients
 * (python/ds_analyzer/_http.py): the client's CPU per MB and per request with the hook, against the same
 * transfers without it, in one Python process, rounds alternating. The origin runs in a process of its own,
 * so the CPU counted (the client's) holds the hook's cost and nothing else's (its writer thread included).
 * Goal: under 2% of one CPU at 200 MB/s and 2,000 requests/s.
 */
const ORIGIN = fileURLToPath(new URL('./proxy-origin.js', import.meta.url));
const CLIENT = fileURLToPath(new URL('../../bench/python/http_client.py', import.meta.url));
const PYTHON = '/usr/bin/python3';
const run = promisify(execFile);

const PHASES = [
  { name: 'bytes: 256 x 1 MiB', size: 1 << 20, count: 256, unit: 'MB' },
  { name: 'requests: 5,000 x 1 KiB', size: 1024, count: 5000, unit: 'request' },
  // The same hook over stubbed http.client methods: its own code per request, without the network's noise.
  { name: "requests, the hook's code alone: 100,000 stubbed", size: 0, count: 100_000, unit: 'request' },
] as const;
const ROUNDS = 9;

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
}

export async function bench(): Promise<void> {
  const origin = spawn(process.execPath, [ORIGIN], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve) =>
    origin.stdout.once('data', (d: Buffer) => resolve(Number(d.toString().trim()))),
  );
  try {
    const perUnit: number[] = [];
    for (const phase of PHASES) {
      const { stdout } = await run(PYTHON, [
        CLIENT,
        String(port),
        String(phase.size),
        String(phase.count),
        String(ROUNDS),
      ]);
      const { plain, hooked } = JSON.parse(stdout) as { plain: number[]; hooked: number[] };
      const units = phase.unit === 'MB' ? (phase.size * phase.count) / 1e6 : phase.count;
      // Paired rounds: the median of the differences, with their spread (the machine's pace moves).
      const diffs = hooked.map((h, k) => ((h - plain[k]) * 1000) / units);
      const cost = median(diffs);
      perUnit.push(cost);
      console.log(
        `${phase.name}: client CPU without the hook ${(median(plain) * 1000).toFixed(0)} ms, with it ${(median(hooked) * 1000).toFixed(0)} ms; ` +
          `hook ${cost.toFixed(4)} ms per ${phase.unit} (rounds ${Math.min(...diffs).toFixed(4)} to ${Math.max(...diffs).toFixed(4)})`,
      );
    }
    // Per MB from the large objects (their per-request part is small beside), per request from the small ones,
    // or from the stubbed run: the paired real transfers carry the network's noise, the stubbed run none.
    const project = (perRequest: number) =>
      ((Math.max(0, perUnit[0]) * 200 + Math.max(0, perRequest) * 2000) / 1000) * 100;
    console.log(
      `projected: ${project(perUnit[1]).toFixed(2)}% of one CPU at 200 MB/s and 2,000 requests/s from the real transfers, ` +
        `${project(perUnit[2]).toFixed(2)}% with the stubbed cost per request (goal: under 2%; the proxy's bench, metering-proxy, projects its own beside)`,
    );
  } finally {
    origin.kill();
  }
}
