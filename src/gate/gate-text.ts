// Messages of gate's errors, shown to users: one line each, with the cause, the flag and the fix. config-file.ts,
// config.ts and options.ts decide; the words live here. gate on a sealed profile loads no zod: import nothing here.

/** Messages of gate's config and options (one line each: cause, flag, fix). */
export const GATE_TEXT = {
  /** gate --baseline of another job or setting (compare/differences.ts): said, not refused (a PR changes the job). */
  baselineDiffers: (differences: readonly string[]) =>
    `note: the baseline is another job or setting (${differences.join('; ')})`,
  configMissing: (path: string) =>
    `gate config '${path}' does not exist: pass an existing file to --config (see docs/ci.md)`,
  configNotJson: (path: string, why: string) =>
    `gate config '${path}' is not valid JSON (${why}): fix the file (see docs/ci.md)`,
  configInvalid: (where: string, what: string) => `gate config '${where}': ${what} (see docs/ci.md)`,
  // What configInvalid says is wrong, at the config's path `at`.
  unknownKeys: (keys: readonly string[], at: string, allowed: string) =>
    `unknown key${keys.length > 1 ? 's' : ''} ${keys.map((k) => `'${k}'`).join(', ')} at ${at}; allowed: ${allowed}`,
  allowedTop: 'baseline, epochs, budgets',
  allowedInBudget: 'level, max (min for throughput, maxSec for timeToFirstBatch)',
  badLevel: (at: string) => `${at} must be one of error, warn, off`,
  noBaseline: (source: string) =>
    `a regression budget (${source}) needs a baseline profile: pass --baseline FILE or set "baseline" in the config`,
  noBudget:
    'no budget to check: pass one such as --max-fetch-stall 20% or --baseline FILE, ' +
    'or a --config file with budgets at level error or warn',
  badEpochs: (text: string) =>
    `--epochs '${text}' is not one of first, later: ` +
    'pass --epochs first (the dataset cold) or --epochs later (epochs 2+)',
} as const;
