/**
 * What `profile --continue` costs the run it rides (issue 43): the deterministic training fixture
 * (test/fixtures/continue-train.py) run plain and under the flag, in the order plain, continued, continued, plain so
 * that a drift of the machine's pace falls on both alike. Prints each run's wall time, the continued runs' extra time
 * over the plain ones less their synthetic blocks, as a ratio to the goal (at most the synthetic blocks plus 2% of
 * the run), the profile's own account of that cost (cost.continued.extraSec) beside it, and the split of the
 * continued profile beside a plain profile of the same job. No torch: says so and prints nothing else.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { readProfile } from '../src/store/profile-store.js';
import type { Profile } from '../src/schema/profile.js';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../test/fixtures/continue-train.py', import.meta.url));
const PYTHON = '/usr/bin/python3';
/** About a minute a run here: the blocks take about 170 iterations of the run's 8,000. */
const EPOCHS = '400';
/** Goal: the run's wall time grows by at most its synthetic blocks plus this share. */
const GOAL_SHARE = 0.02;

export async function bench(): Promise<void> {
  if ((await execa(PYTHON, ['-c', 'import torch'], { reject: false })).exitCode !== 0) {
    console.log(`skipped: needs ${PYTHON} with torch (apt-get install python3-torch)`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'dsa-bench-continue-'));
  try {
    const data = join(work, 'data');
    mkdirSync(data);
    for (let i = 0; i < 160; i++) writeFileSync(join(data, `f${String(i).padStart(4, '0')}.bin`), Buffer.alloc(256, i));
    const plain: number[] = [];
    const continued: { wallSec: number; profile: Profile }[] = [];
    for (const [k, kind] of ['plain', 'continued', 'continued', 'plain'].entries()) {
      const dir = join(work, `${kind}-${k}`);
      if (kind === 'plain') plain.push(await timedRun(dir, data, null));
      else continued.push(await timedContinued(dir, data));
    }
    report(plain, continued);
    const profiled = await plainProfile(join(work, 'profile'), data);
    printSplits(continued[0].profile, profiled);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

function jobArgs(dir: string, data: string): string[] {
  return [SCRIPT, '--data', data, '--epochs', EPOCHS, '--step-ms', '2', '--out', join(dir, 'run.json')];
}

/** Wall time of one run, s: the job alone, or under `profile` with `cliArgs`. */
async function timedRun(dir: string, data: string, cliArgs: string[] | null): Promise<number> {
  mkdirSync(dir, { recursive: true });
  const job = [PYTHON, ...jobArgs(dir, data)];
  const argv = cliArgs ? [process.execPath, CLI, ...cliArgs, '--', ...job] : job;
  const started = performance.now();
  const run = await execa(argv[0], argv.slice(1), { cwd: dir, reject: false, all: true });
  if (run.exitCode !== 0) throw new Error(`exit ${run.exitCode}: ${String(run.all).split('\n').slice(-5).join('\n')}`);
  return (performance.now() - started) / 1000;
}

async function timedContinued(dir: string, data: string): Promise<{ wallSec: number; profile: Profile }> {
  const out = join(dir, 'profile.json');
  const wallSec = await timedRun(dir, data, ['profile', '--continue', '--data', data, '--out', out]);
  return { wallSec, profile: readProfile(out) };
}

async function plainProfile(dir: string, data: string): Promise<Profile> {
  const out = join(dir, 'profile.json');
  await timedRun(dir, data, ['profile', '--data', data, '--out', out]);
  return readProfile(out);
}

function report(plain: number[], continued: { wallSec: number; profile: Profile }[]): void {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const plainSec = mean(plain);
  const contSec = mean(continued.map((c) => c.wallSec));
  const costs = continued.map((c) => c.profile.cost?.continued);
  const syntheticSec = mean(costs.map((c) => c?.syntheticSec ?? 0));
  const claimedSec = mean(costs.map((c) => c?.extraSec ?? 0));
  const beyond = (contSec - plainSec - syntheticSec) / plainSec;
  console.log(`plain runs: ${plain.map((s) => s.toFixed(1)).join(' s, ')} s`);
  console.log(`continued runs: ${continued.map((c) => c.wallSec.toFixed(1)).join(' s, ')} s`);
  console.log(
    `measured extra: ${(contSec - plainSec).toFixed(1)} s; the profile's account (extraSec): ${claimedSec.toFixed(1)} s`,
  );
  console.log(`synthetic blocks: ${syntheticSec.toFixed(1)} s`);
  console.log(
    `extra beyond the synthetic blocks: ${(beyond * 100).toFixed(1)}% of the run ` +
      `(goal at most ${GOAL_SHARE * 100}%: ratio ${(beyond / GOAL_SHARE).toFixed(2)}; on a ${plainSec.toFixed(0)} s run, ` +
      'where the blocks are a larger share than on an hour)',
  );
}

function printSplits(continued: Profile, plain: Profile): void {
  const row = (name: string, p: Profile) => {
    const a = p.analysis;
    const ms = (v: { mean: number } | undefined | null) => (v ? `${v.mean.toFixed(2)} ms` : 'n/a');
    return `${name}: iteration ${ms(a?.iterMs)}, fetch stall ${ms(a?.fetchStallMs)}, prep stall ${ms(a?.prepStallMs)}`;
  };
  console.log(row('split under --continue', continued));
  console.log(row('split of a plain profile', plain));
}
