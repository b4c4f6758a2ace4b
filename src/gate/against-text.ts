// Words of gate --against (A/B in one run): the verdict's notes and the one-line errors of its flags (cause, flag,
// fix). against.ts and the cli/ modules of --against decide; the words live here.

import { DEFAULT_PAIRS, DEFAULT_SLICED_ROUNDS } from './against-defaults.js';
import type { PairedJudgement } from './paired.js';

/** Messages of gate --against. */
export const AGAINST_TEXT = {
  paces: (reference: string, candidate: string, mode: string, pairs: number) =>
    `${reference} → ${candidate} ms/sample (${mode} pace, reference → candidate), ` +
    (mode === 'cached'
      ? `judged over ${pairs} rounds of both versions at once, handed the machine in turn in slices A B B A: ` +
        'the pace of the machine falls on both versions'
      : `judged on ${pairs} pairs of adjacent rounds run A B B A: the drift of the machine falls on both versions`),
  judged: {
    fail: (limit: string) => `beyond the ${limit} budget: the whole 95% interval of the paired change lies above it`,
    pass: (limit: string) => `within the ${limit} budget`,
    'pass-within-noise': (limit: string) =>
      `above the ${limit} budget but the 95% interval of the paired change reaches below it: not a proven ` +
      'regression (more --rounds narrow it)',
  } satisfies Record<PairedJudgement, (limit: string) => string>,
  unproven: (count: number, of: number, mode: string) =>
    `${count} of the rounds' ${of} profiles did not prove their ${mode} state (both versions ran the same way, so the pair still ` +
    'compares like with like)',
  noCandidate:
    'gate --against needs the candidate command after --: ' +
    "gate --against 'python train.py' --data ./ds -- python train.py --new",
  noData: 'gate --against needs the dataset the jobs read: pass --data DIR (repeatable)',
  againstEmpty: "--against '' names no command: pass the reference command, e.g. --against 'python train.py'",
  shellSyntax: (token: string) =>
    `--against holds shell syntax '${token}' that is run without a shell: wrap it as --against "sh -c '...'"`,
  unclosedQuote: '--against has an unclosed quote: close it or quote the command once',
  withOthers: (flags: string) =>
    `gate --against judges the regression of the candidate over the reference only: drop ${flags}, ` +
    'or gate a stored profile with them',
  withoutAgainst: (flags: string) =>
    `${flags} belong${flags.includes(',') ? '' : 's'} to A/B in one run: add --against 'REFERENCE COMMAND' and the ` +
    'candidate command after --, or drop them',
  extraProfiles: (count: number) =>
    `gate takes one profile, got ${count}: pass one profile file, or run two commands with --against CMD -- CMD`,
  roundsTooFew: (text: string) =>
    `--rounds '${text}' is below 2: the interval needs at least 2 (default ${DEFAULT_PAIRS} pairs of rounds; ` +
    `with --epochs later ${DEFAULT_SLICED_ROUNDS} launches of both versions)`,
  roundDone: (index: number, total: number, arm: string, pace: string, iterations: number) =>
    `round ${index}/${total} ${arm}: ${pace} ms/sample over ${iterations} measured iterations`,
  slicedRoundDone: (index: number, total: number, paces: string, change: string, pairs: number) =>
    `round ${index}/${total}: ${paces} ms/sample (reference → candidate), ${change} over its ${pairs} pairs of slices`,
  endedBeforeSlices: (arm: string, why: string) =>
    `the ${arm}'s job ended (${why}) before its slices were measured: let it run longer (more epochs), or lower ` +
    '--max-iterations',
  slicesTooShort:
    'no pair of slices held 2 iterations of each version past its first: the jobs reported too few iterations ' +
    'while they ran',
  layout: (refused: string | null, seed: string) =>
    refused === null
      ? `note: both versions run without address-space randomisation and with PYTHONHASHSEED=${seed}, so that ` +
        'launches of one job differ less (docs/ci.md)'
      : `warning: address-space randomisation stays on for the jobs (${refused}): each round carries more of an ` +
        'offset of its own, and more --rounds may be needed (docs/ci.md)',
  roundFailed: (index: number, arm: string, why: string, path: string) =>
    `round ${index} (${arm}) gave no pace: ${why}; see ${path}`,
  roundTooShort: (iterations: number) =>
    `its job ended after ${iterations} iteration${iterations === 1 ? '' : 's'}, too few to time past the warm-up: ` +
    "let each round's job run longer (more epochs or iterations; --max-iterations caps a round)",
  outDirUnwritable: (dir: string, why: string) =>
    `cannot make the rounds' folder '${dir}' (${why}): pass --out-dir a folder you may write`,
  written: (dir: string) => `the rounds' profiles and the comparison (comparison.json) are in ${dir}`,
  interrupted: (dir: string) => `interrupted; the rounds measured so far are in ${dir}`,
  lastLines: (tail: string) => `the failed round's last lines of output:\n${tail}`,
} as const;
