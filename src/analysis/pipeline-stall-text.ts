/**
 * Words shown to users about the checkpoint and epoch-boundary stalls: the one line that says how each was measured,
 * and the caveat for writes no hooked save accounts for. Kept apart from the arithmetic (STYLE.md, "Words").
 */
import type { BoundaryStall, CheckpointStall } from '../schema/profile.js';
import { formatBytes, formatRate } from '../units.js';

const ms = (value: number): string =>
  value >= 100 ? value.toFixed(0) : value >= 10 ? value.toFixed(1) : value.toFixed(2);
const iters = (value: number): string => (value >= 10 ? value.toFixed(0) : value.toFixed(1));

type Measured<T> = Omit<T, 'text'>;

export const CHECKPOINT_TEXT = {
  /** How the checkpoint stall was measured, e.g. '3 saves (torch.save) in the cold mode, 240 ms each ...'. */
  measured: (c: Measured<CheckpointStall>): string => {
    const parts = [
      `${c.saves} save${c.saves === 1 ? '' : 's'} (${c.apis.join(', ')}) in the ${c.modes.join(' and ')} mode${c.modes.length === 1 ? '' : 's'}, ${ms(c.perSaveMs.mean)} ms each` +
        (c.perSaveMs.halfWidth !== null ? ` ± ${ms(c.perSaveMs.halfWidth)}` : ''),
      c.intervalIterations !== null
        ? `every ${iters(c.intervalIterations)} iterations of the ${c.mode} mode (${intervalWords[c.intervalSource ?? 'run']})`
        : '',
      c.bytesPerSave !== null
        ? `${formatBytes(c.bytesPerSave)} a save` +
          (c.writeBytesPerSec !== null ? ` at ${formatRate(c.writeBytesPerSec)}` : '')
        : '',
      c.syncMsPerSave > 0
        ? `${ms(c.syncMsPerSave)} ms of it forcing data to storage (fsync)`
        : 'not synced to storage before returning (the page cache took it)',
      c.asyncWriteMs !== null ? `background write ${ms(c.asyncWriteMs)} ms` : '',
    ].filter((p) => p !== '');
    const synthetic = c.syntheticSaves;
    const scratch =
      synthetic === null
        ? ''
        : synthetic.persisted > 0
          ? `; the synthetic mode saved ${synthetic.persisted} time${synthetic.persisted === 1 ? '' : 's'} to an open file it could not divert (that file holds a model trained on one replayed batch)`
          : `; the synthetic mode's ${synthetic.scratch} save${synthetic.scratch === 1 ? '' : 's'} went to scratch files beside the targets, removed (your checkpoints untouched)`;
    return parts.join(', ') + scratch;
  },
  /** The job wrote more than its hooked saves account for. */
  unseenWrites: (bytesPerIter: number, mode: string, syncedBytesPerSec: number | null, sawSaves: boolean): string =>
    `the job's processes wrote ${formatBytes(bytesPerIter)} per iteration in the ${mode} mode ` +
    `${sawSaves ? 'beyond the saves the hook timed' : 'and no save the hook knows was seen'} (a copy of a checkpoint, a writer of its own, logs): ` +
    (syncedBytesPerSec !== null
      ? `at the storage's synced write rate (${formatRate(syncedBytesPerSec)}) that is up ` +
        `to ${ms((bytesPerIter / syncedBytesPerSec) * 1000)} ms an iteration, `
      : '') +
    "inside a step or between epochs (the tree's counter cannot tell which), where no term of the breakdown " +
    'shows it; time the writer with ds_analyzer.checkpoint() to measure it',
};

const intervalWords: Record<NonNullable<CheckpointStall['intervalSource']>, string> = {
  saves: 'between consecutive saves',
  epoch: "one save per epoch, the epoch's length",
  run: 'the iterations run per save',
};

export const BOUNDARY_TEXT = {
  /** How the boundary stall was measured. */
  measured: (b: Measured<BoundaryStall>): string =>
    `${ms(b.perEpochMs.mean)} ms each epoch start in the ${b.mode} mode ` +
    `(${ms(b.createMs)} ms in iter(loader), the first batch ${ms(b.firstWaitExcessMs)} ms later than a steady one), ` +
    `over ${b.epochIterations} iterations an epoch; ` +
    (b.basis === 'later-epochs'
      ? `measured at ${b.epochs} later epoch start${b.epochs === 1 ? '' : 's'}` +
        (b.repeats === true ? ', paid again each epoch' : '')
      : 'no later epoch ran: the first epoch stands for them (an upper bound: it holds one-time start-up)') +
    (b.persistentWorkers === false && (b.workers ?? 0) > 0
      ? `; ${b.workers} workers restart every epoch (persistent_workers=False)`
      : '') +
    (b.gapMs != null && b.gapMs >= 1
      ? `; between epochs the script spent ${ms(b.gapMs)} ms outside the training loop (its validation, saves ` +
        `between epochs, its own work: not a data stall)`
      : ''),
};
