/**
 * Words of the checkpoint and epoch-boundary what-if: what each answer rests on where nothing measured it. Kept apart
 * from the arithmetic (STYLE.md).
 */
const ms = (value: number): string => (value >= 100 ? value.toFixed(0) : value.toFixed(1));

export const PIPELINE_TEXT = {
  bytesUnknown:
    'the saves did not say their size (a save to an open file object): --write-bw cannot be applied, saves stay ' +
    'as measured',
  stagingAssumed: (serialiseMs: number) =>
    `an async save blocks the loop for its staging; assumed to cost what the measured save spent not writing ` +
    `(${ms(serialiseMs)} ms)`,
  bufferedSaves:
    'the saves returned before their data reached storage (no fsync): the page cache takes each at memory speed ' +
    'while writeback drains it before the next save; ' +
    'beyond that the writer is held to --write-bw (a cgroup v1 write throttle holds this only where the job ' +
    'itself writes back: a checkpoint overwritten in place, which ext4 writes back on close; not the ' +
    'background writeback of new files)',
  savesPerEpoch: (epochIterations: number) =>
    `the script saves at each epoch's end (every ${Math.round(epochIterations)} iterations): saving at another ` +
    `interval is a change to the script (a save every K steps inside the loop, or Lightning's ` +
    `ModelCheckpoint(every_n_train_steps=K), TrainingArguments(save_steps=K))`,
  writeUnmeasured: "the saves' write to storage was not measured (no fsync, no background write): give --write-bw",
  noPace: 'the steady model has no per-iteration time: the overhead and the interval for the budget are not known',
  refill: (refillMs: number) =>
    `persistent workers start once; each epoch's start is then the refill of an empty pipeline: one batch ` +
    `prepared by one worker (${ms(refillMs)} ms: the batch's samples at the prep CPU per sample)`,
  refillUpperBound:
    "persistent workers start once; each epoch's start is then the refill of an empty pipeline, taken as the " +
    'measured first wait (an upper bound: the prep CPU per sample was not measured)',
  restartUnmeasured:
    "workers that start again each epoch were not measured (the profile's were persistent): the first epoch's " +
    'start is the nearest measurement, kept as profiled',
  prefetchNoEffect:
    "prefetch_factor deepens the loader's queue in steady state; an epoch's first batch still waits for its " +
    'whole preparation, so the boundary stall does not change',
};
