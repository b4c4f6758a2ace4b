/**
 * A whatif query on a stored profile, as a user runs it: the whole CLI
 * process (start-up, reading the profile, fitting, the LRU curve, sweeps and
 * recommendations), its CPU time read from the shell's `times` for its
 * children. Target: well under a second.
 */
import { execa } from 'execa';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));
const PROFILE = fileURLToPath(new URL('../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const ROUNDS = 5;

export async function bench(): Promise<void> {
  const cpuMs: number[] = [];
  const wallMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const started = performance.now();
    // `times` prints the shell's own user/sys times, then its children's: the CLI's.
    const { stdout } = await execa('bash', [
      '-c',
      'node "$1" whatif "$2" --cache 50% --cpus 4 > /dev/null; times',
      'bench',
      CLI,
      PROFILE,
    ]);
    wallMs.push(performance.now() - started);
    const children = stdout.trim().split('\n').at(-1)!.split(/\s+/).map(seconds);
    cpuMs.push((children[0] + children[1]) * 1000);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  console.log(`whatif --cache 50% --cpus 4 on a stored profile, ${ROUNDS} runs (median):`);
  console.log(`  process CPU (user+sys): ${median(cpuMs).toFixed(0)} ms (target: well under 1000 ms)`);
  console.log(`  wall:                   ${median(wallMs).toFixed(0)} ms`);
}

/** '0m0.412s' as seconds. */
function seconds(text: string): number {
  const match = /^(\d+)m([\d.]+)s$/.exec(text);
  if (!match) throw new Error(`unexpected 'times' output: ${text}`);
  return Number(match[1]) * 60 + Number(match[2]);
}
