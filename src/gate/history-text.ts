// Words of `gate --history`: its one-line errors and its notes. history.ts decides; the words live here.

/** Messages of the history gate (one line each: cause, flag, fix). */
export const HISTORY_TEXT = {
  folderMissing: (dir: string) =>
    `--history '${dir}' is not a folder: pass the folder that keeps main's profiles (see docs/ci.md)`,
  tooFew: (dir: string, found: number, least: number) =>
    `--history '${dir}' holds ${found} usable profile${found === 1 ? '' : 's'}; ` +
    `the history gate needs at least ${least}: keep more of main's profiles there (see docs/ci.md)`,
  otherJobs: (dir: string, names: readonly string[]) =>
    `--history '${dir}' mixes profiles of different jobs (${names.map((n) => `'${n}'`).join(', ')}): ` +
    'keep one job in the folder, or give each job its own folder (profile --name, --out)',
  withOthers: (flags: string) =>
    `--history judges only --max-regression over the folder; ${flags} cannot go with it: run gate once more for those`,
  otherCommands: (count: number) =>
    `ds-analyzer: warning: the history's profiles ran ${count} different commands of one job: ` +
    'a step may be a change of settings, not of code\n',
  skipped: (file: string, why: string) => `ds-analyzer: warning: ${file} left out of the history: ${why}\n`,
  noCold: 'no measured cold mode',
  chartWithoutHistory: '--chart draws the history: pass it with --history DIR',
  chartUnwritable: (path: string, why: string) =>
    `cannot write the chart '${path}' (${why}): pass --chart a path in a writable folder`,
} as const;
