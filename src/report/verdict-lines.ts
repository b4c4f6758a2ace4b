import type { Profile } from '../schema/profile.js';

/** One verdict line: what it is of (null: the cold pace alone, a profile without its later epochs) and its text. */
export interface VerdictLine {
  label: string | null;
  text: string;
}

/**
 * The verdict as every renderer gives it. With the later epochs known it is two lines, and the cold verdict says it is
 * the first epoch's: the cold pace is that epoch's alone (docs/method.md, "The first epoch and the rest").
 */
export function verdictLines(profile: Profile): VerdictLine[] {
  const verdict = profile.analysis?.verdict.text;
  if (verdict === undefined) return [];
  if (!profile.laterEpochs) return [{ label: null, text: verdict }];
  return [
    { label: 'first epoch (the dataset cold)', text: verdict },
    { label: 'epochs 2+', text: profile.laterEpochs.text },
  ];
}

/** 'first epoch (...)' as a sentence starts it. */
export function capitalised(label: string): string {
  return label.charAt(0).toUpperCase() + label.slice(1);
}
