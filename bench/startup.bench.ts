/**
 * Start-up cost of the CLI, as a user meets it: whole processes of
 * `--version`, `--help`, and whatif and gate on stored profiles, each beside a
 * bare `node -e 0` measured in the same run, the commands in turn so that a
 * noisy neighbour hits all alike. CPU is user+sys of the process, read from
 * the shell's `times` for its children; what a command costs beyond node's
 * own start-up is what the CLI adds. Goals: whatif on a stored profile within
 * 100 ms of CPU beyond node's own, --version and --help near node's own.
 *
 * A stored profile is one this build wrote: the fixtures are written afresh
 * through writeProfile (sealed, src/store/profile-seal.ts) into a temporary
 * folder first, as `profile` would have. The fixture as checked in (no seal:
 * validated in full) is timed beside, for the cost of a profile from
 * elsewhere.
 * Run: npm run bench -- startup
 */
import { execa } from 'execa';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { readProfile, writeProfile } from '../src/store/profile-store.js';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));
const PROFILE = fileURLToPath(new URL('../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const GATE_PROFILE = fileURLToPath(new URL('../../test/fixtures/profiles/gate/pass.json', import.meta.url));
const ROUNDS = 9;

/**
 * A command to time: node's arguments, and its goal in ms of CPU beyond node's own (none: near node's own; null: shown
 * only).
 */
interface Case {
  label: string;
  argv: string[];
  goalMs?: number | null;
}

const NODE: Case = { label: 'node -e 0', argv: ['-e', '0'] };

/** The commands, on `profile` and `gateProfile` as this build wrote them. */
function cases(profile: string, gateProfile: string): Case[] {
  return [
    { label: '--version', argv: [CLI, '--version'] },
    { label: '--help', argv: [CLI, '--help'] },
    { label: 'whatif <profile>', argv: [CLI, 'whatif', profile], goalMs: 100 },
    // No figure was set for gate: like whatif it reads one stored profile and prints, so whatif's goal.
    { label: 'gate <profile>', argv: [CLI, 'gate', gateProfile, '--max-fetch-stall', '20%'], goalMs: 100 },
    // The checked-in fixture has no seal: validated in full, as a profile of another build or an edited one.
    { label: 'whatif <unsealed>', argv: [CLI, 'whatif', PROFILE], goalMs: null },
  ];
}

/** CPU (user+sys) and wall time of a process, in ms. */
interface Times {
  cpuMs: number;
  wallMs: number;
}

interface Run extends Times {
  exitCode: number;
}

/** One process of this node with `argv`, its output thrown away. */
async function once(argv: string[]): Promise<Run> {
  // `times` prints the shell's own user/sys times, then its children's: the command's.
  const script =
    'start=$EPOCHREALTIME; "$@" > /dev/null 2>&1; code=$?; end=$EPOCHREALTIME; times; echo "$start $end $code"';
  const { stdout } = await execa('bash', ['-c', script, 'bench', process.execPath, ...argv], { env: { LC_ALL: 'C' } });
  const lines = stdout.trim().split('\n');
  const [user, sys] = lines.at(-2)!.split(/\s+/).map(seconds);
  const [start, end, exitCode] = lines.at(-1)!.split(' ').map(Number);
  return { cpuMs: (user + sys) * 1000, wallMs: (end - start) * 1000, exitCode };
}

export async function bench(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-startup-'));
  try {
    const profile = join(dir, 'emulated-quick.json');
    const gateProfile = join(dir, 'pass.json');
    writeProfile(profile, readProfile(PROFILE));
    writeProfile(gateProfile, readProfile(GATE_PROFILE));
    await timeCases(cases(profile, gateProfile));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

async function timeCases(CASES: Case[]): Promise<void> {
  const cases = [NODE, ...CASES];
  const runs = new Map<Case, Run[]>(cases.map((c) => [c, []]));
  // One run of each first, not counted: the files come from the page cache in every counted run.
  for (const c of cases) await once(c.argv);
  for (let round = 0; round < ROUNDS; round++) {
    for (const c of cases) runs.get(c)!.push(await once(c.argv));
  }
  const node = medianRun(runs.get(NODE)!);
  const row = (label: string, times: Times, rest: string) =>
    `${`  ${label.padEnd(18)} ${times.cpuMs.toFixed(0).padStart(6)} ${times.wallMs.toFixed(0).padStart(7)}   ${rest}`.trimEnd()}\n`;
  let text = `start-up: ${ROUNDS} runs of each, in turn (median); CPU is user+sys of the process, in ms\n`;
  text += `  ${'command'.padEnd(18)} ${'CPU'.padStart(6)} ${'wall'.padStart(7)}   CPU beyond node's own, against the goal\n`;
  text += row(NODE.label, node, '');
  for (const c of CASES) {
    const median = medianRun(runs.get(c)!);
    const beyondMs = median.cpuMs - node.cpuMs;
    const goal =
      c.goalMs === undefined
        ? `${(median.cpuMs / node.cpuMs).toFixed(2)}x node's own (goal: near 1x)`
        : c.goalMs === null
          ? ''
          : `${(beyondMs / c.goalMs).toFixed(2)}x the goal of ${c.goalMs} ms`;
    const failed = runs.get(c)!.filter((r) => r.exitCode !== 0).length;
    text += row(
      c.label,
      median,
      `${beyondMs.toFixed(0).padStart(5)} ms${goal ? `: ${goal}` : ''}${failed ? `  (exit code not 0 in ${failed} runs)` : ''}`,
    );
  }
  process.stdout.write(text);
}

/** Median CPU and median wall time of the runs (each on its own). */
function medianRun(runs: readonly Run[]): Times {
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  return { cpuMs: median(runs.map((r) => r.cpuMs)), wallMs: median(runs.map((r) => r.wallMs)) };
}

/** '0m0.412s' as seconds. */
function seconds(text: string): number {
  const match = /^(\d+)m([\d.]+)s$/.exec(text);
  if (!match) throw new Error(`unexpected 'times' output: ${text}`);
  return Number(match[1]) * 60 + Number(match[2]);
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
