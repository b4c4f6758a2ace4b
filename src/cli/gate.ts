import { Command } from 'commander';
import { ExitCode } from '../errors.js';
import type { RawGateOptions } from './gate-action.js';
import { collect, withExitCodes, type CommandFactory, type ExitCodeList } from './program.js';
import {
  DEFAULT_PAIRS,
  DEFAULT_ROUND_ITERATIONS,
  DEFAULT_SLICED_SEC,
  DEFAULT_SLICED_ROUNDS,
} from '../gate/against-defaults.js';

/** The exit codes `gate` can return, in its --help and docs/cli.md. */
const GATE_EXIT_CODES: ExitCodeList = [
  { code: ExitCode.Ok, meaning: 'every budget at level error held (warnings may be printed)' },
  {
    code: ExitCode.GateFailed,
    meaning:
      'a budget at level error failed (the verdict says which, and why); with --history: a slowdown beyond ' +
      '--max-regression began among the newest 5 profiles; with --against: the whole 95% interval of the paired ' +
      'change lies above --max-regression',
  },
  {
    code: ExitCode.Usage,
    meaning:
      'usage: no budget given, a regression budget without --baseline, an unknown flag; --history over ' +
      "profiles of different jobs, or with a profile or another budget's flag; --against without a candidate " +
      'command or --data, or with a flag that judges a stored profile',
  },
  {
    code: ExitCode.BadValue,
    meaning:
      'a bad value: a flag value, or a config file that is not valid JSON or has an unknown key, a wrong type, ' +
      'or a level other than error/warn/off',
  },
  {
    code: ExitCode.MissingInput,
    meaning:
      'the profile, the baseline or the config file does not exist; the --history folder does not, or holds ' +
      'fewer than 6 usable profiles',
  },
  {
    code: ExitCode.JobFailed,
    meaning: "the profile records a failed training job; with --against: a round's job failed or gave no pace",
  },
  { code: ExitCode.CommandNotFound, meaning: "with --against: a round's command was not found" },
  {
    code: ExitCode.CorruptFile,
    meaning: 'the profile, the baseline or a --history profile is corrupt (not JSON, wrong schemaVersion, malformed)',
  },
  {
    code: ExitCode.Environment,
    meaning:
      "the JUnit file, the step summary, the --chart PNG or --against's --out-dir cannot be written (a full disk)",
  },
  ExitCode.Internal,
  { code: ExitCode.Interrupted, meaning: "with --against: interrupted (the rounds' profiles so far are saved)" },
];

/** What gate's --help says after its flags: how the budgets are judged, the history, A/B in one run, examples. */
const GATE_HELP = `
Budget flags override the config file, rule by rule, at level error. Stall and
throughput budgets compare the mean and show its 95% interval; a regression
fails only when it exceeds the budget beyond the noise of both profiles. A rule
that rests on a mode whose cache state was not proven fails, with the reason.
When GITHUB_STEP_SUMMARY is set, a Markdown verdict is appended to it. Each
rule says which epochs it judged: the first (the dataset cold) or epochs 2+
(--epochs later); the time to the first batch is always the first epoch's.

--history judges a folder of main's profiles instead of one profile: it finds
the steps (change points, p = 0.05) in the cold iteration time per sample and
in the fetch and prep stalls, names the profile where each began, draws each
series with its steps marked (^), and fails only when the newest step of the
iteration time is a slowdown beyond --max-regression (default 5%) that began
among the newest 5 profiles. It needs at least 6 profiles (docs/ci.md).

--against REF -- CMD is A/B in one run: the reference command REF and the
candidate CMD run in alternating short profiles of the cold mode, in the order
A B B A A B B A ... (--rounds pairs), so the drift of a shared runner falls on
both and cancels in each pair. The regression fails only when the whole 95%
interval of the paired change lies above --max-regression (default 5%). Each
round's profile and comparison.json are written to --out-dir. With --epochs
later (the pace of epochs 2+, the dataset in the page cache) both versions run
at once and take the machine in turn, in slices of about 30 iterations: the
one not measured is stopped (SIGSTOP of its process group). Each launch of the
two is a round (--rounds, default 5), and the change is judged over them.

--noise-history DIR adds the noise between runs to --baseline's regression:
the spread of the cold pace over main's stored profiles (at least 6); the
verdict says which noise it used and by how much the interval widened.

Examples:
  $ ds-analyzer gate --max-fetch-stall 20% --max-prep-stall 30%
  $ ds-analyzer gate --epochs later --max-total-stall 10%
  $ ds-analyzer gate --max-checkpoint-stall 3.5% --max-time-to-first-batch 60s
  $ ds-analyzer gate profiles/train.json --baseline baseline.json --max-regression 5% --junit gate.xml
  $ ds-analyzer gate --config .ds-analyzer-gate.json profiles/train.json
  $ ds-analyzer gate --history main-profiles/ --max-regression 5% --chart history.png
  $ ds-analyzer gate profiles/train.json --baseline main.json --noise-history main-profiles/
  $ ds-analyzer gate --against 'python train.py' --data ./ds -- python train.py --new-aug
  $ ds-analyzer gate --against 'python train.py' --epochs later --data ./ds -- python train.py --new-aug`;

export const gateCommand: CommandFactory = (io, result) => {
  const command = new Command('gate')
    .description(
      'check a profile against performance budgets (stalls, throughput, regression against a baseline) for CI, ' +
        'or two versions of a job run side by side (--against)',
    )
    .argument(
      '[profile]',
      'profile file (default: the newest in --profiles-dir); with --against: the candidate command, after --',
    )
    .allowExcessArguments()
    .option('--config <file>', 'JSON file of budgets with levels error/warn/off (docs/ci.md)')
    .option('--max-fetch-stall <share>', 'largest fetch stall, as a share of the iteration time, e.g. 20%')
    .option('--max-prep-stall <share>', 'largest prep stall, as a share of the iteration time')
    .option('--max-total-stall <share>', 'largest fetch + prep stall, as a share of the iteration time')
    .option(
      '--max-checkpoint-stall <share>',
      'largest checkpoint stall (saves amortised per iteration), as a share of the iteration time',
    )
    .option(
      '--max-time-to-first-batch <duration>',
      "longest time from the training loader's iter() to its first batch in the cold mode, e.g. 30s or 2m",
    )
    .option('--min-throughput <samples/s>', 'lowest training throughput (cold mode), samples/s')
    .option(
      '--epochs <which>',
      "which epochs the stall, throughput and regression budgets judge: 'first' (the dataset cold: the cold " +
        "mode) or 'later' (epochs 2+: the cached pace where the page cache holds the dataset, else the what-if's " +
        "steady state) (default: first, or the config's epochs); with --against: rounds in turn of the cold mode " +
        '(first), or both versions at once in slices of the cached mode (later)',
    )
    .option('--baseline <file>', 'baseline profile for the regression rule')
    .option(
      '--max-regression <share>',
      'largest growth of the iteration time over the baseline, beyond the noise (default 5% with --baseline, --history or --against)',
    )
    .option(
      '--history <dir>',
      "judge main's profiles of one job in that folder, in the time each recorded: steps in the cold iteration " +
        'time per sample, found by E-divisive means; fails on a slowdown beyond --max-regression among the newest 5',
    )
    .option('--chart <file.png>', 'with --history: also draw the iteration time per sample as a PNG, steps marked')
    .option(
      '--noise-history <dir>',
      "with --baseline: main's stored profiles of this job (the --history folder); the spread of their cold pace " +
        'between runs widens the regression interval where it is wider than the noise within the two profiles',
    )
    .option('--junit <file>', 'also write JUnit XML, one test case per rule')
    .option('--json', 'print the verdict as JSON on stdout')
    .option('--profiles-dir <dir>', 'folder searched for the newest profile', 'profiles')
    .addHelpText('after', GATE_HELP)
    .action(async (_profile: string | undefined, raw: RawGateOptions, self: Command) => {
      // Loaded when gate runs: the rules, zod and the renderers stay out of every other command's start-up.
      const { gateAction } = await import('./gate-action.js');
      result.exitCode = await gateAction(self.args, raw, io);
    });
  return withExitCodes(withAgainstOptions(command), GATE_EXIT_CODES);
};

/** The flags of gate --against (A/B in one run), after the others in --help. */
function withAgainstOptions(command: Command): Command {
  return command
    .option(
      '--against <command>',
      'A/B in one run: the reference command (quoted, one string); the candidate follows --, and both run in ' +
        'alternating rounds A B B A ... (with --epochs later: both at once, in slices)',
    )
    .option('--data <dir>', 'with --against: dataset folder the jobs read (repeatable)', collect)
    .option(
      '--rounds <n>',
      `with --against: pairs of rounds, at least 2 (default ${DEFAULT_PAIRS}); with --epochs later: launches of ` +
        `both versions (default ${DEFAULT_SLICED_ROUNDS})`,
    )
    .option(
      '--max-iterations <n>',
      `with --against: measured iterations of each round (default ${DEFAULT_ROUND_ITERATIONS}); with --epochs ` +
        `later: of each version inside its slices, a round (default: ${DEFAULT_SLICED_SEC.measured} s of each, ` +
        `after ${DEFAULT_SLICED_SEC.warmUp} s of warm-up)`,
    )
    .option('--timeout <duration>', "with --against: kill a round's job tree after this long (default 15m)")
    .option(
      '--out-dir <dir>',
      "with --against: folder for the rounds' profiles and comparison.json (default: --profiles-dir/ab-<time>)",
    )
    .option('--allow-concurrent', 'with --against: run even where another profile runs on this machine')
    .option(
      '--python <path>',
      "with --against: the jobs' interpreter, e.g. ~/venv/bin/python, as profile --python (its folder first on PATH)",
    )
    .option(
      '--as-user <user>',
      "with --against: start the jobs as this user, as profile --as-user (default: under sudo, SUDO_USER; 'root' " +
        'keeps them root)',
    );
}
