// One launch, a source's capability: its modes set under one running launch (docs/method.md, "One launch").
import type { Mode } from '../../schema/events.js';
import type { Dataset } from '../../system/dataset/dataset.js';

/** Sets the modes' states under one running launch of the job. */
export interface OneLaunch {
  /** Why these modes on this dataset still need a launch each, or null when they can be blocks of one. */
  obstacle(dataset: Dataset, modes: readonly Mode[]): string | null;
}

/** A source that can set its modes under one launch; absent, a launch each (whyNot.oneLaunch says why). */
export interface OneLaunching {
  readonly oneLaunch: OneLaunch;
}
