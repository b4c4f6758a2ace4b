// Words of gate --noise-history (the noise between runs for --baseline's regression). between-runs.ts and rules.ts
// decide; the words live here.

/** Messages and notes of the between-run noise. */
export const BETWEEN_RUNS_TEXT = {
  withoutBaseline:
    '--noise-history widens the regression against a baseline: pass --baseline FILE too, or drop --noise-history',
  withHistory: '--noise-history goes with --baseline, not --history (which judges the folder itself): drop one of them',
  laterEpochs:
    '--noise-history learns the spread of the first-epoch (cold) pace, not of epochs 2+: drop --epochs later, or ' +
    'drop --noise-history',
  tooFlat: (dir: string) =>
    `--noise-history '${dir}' gives fewer than 3 run-to-run changes outside its steps: keep more of main's ` +
    'profiles there (see docs/ci.md)',
  used: (within: string, between: string, factor: string, profiles: number, source: string) =>
    `noise between runs counted: the spread of ${profiles} stored profiles in ${source} (± ${between} a run-to-run ` +
    `change) widened the interval from ± ${within} (within the two profiles) by ${factor}x`,
  notUsed: (within: string, between: string, profiles: number, source: string) =>
    `noise between runs checked: the spread of ${profiles} stored profiles in ${source} (± ${between}) is no wider ` +
    `than the two profiles' own ± ${within}: kept`,
} as const;
