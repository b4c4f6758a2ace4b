/**
 * whatif's checkpoint and DataLoader flags: knobs of the pipeline stalls (PipelineQuery, pipeline-stalls.ts) rather
 * than of the steady model's Scenario, declared once for --help, the parse and the caveat of a flag with nothing to
 * apply to.
 */
import { CHECKFREQ_OVERHEAD_BUDGET } from '../../analysis/checkpoint-stall.js';
import { ExitCode, UserError } from '../../errors.js';
import { parseFraction, parsePositiveInt, parsePositiveNumber, parseRate, percent } from '../../units.js';
import type { PipelineQuery } from '../pipeline-stalls.js';
import { knobAttribute, type KnobFlag, type RawKnobFlags } from './knob.js';
import { KNOB_TEXT } from './knob-text.js';

/** A pipeline flag: the PipelineQuery field it sets and, for the unapplied caveat, the stall it changes. */
interface PipelineKnob {
  name: string;
  flag: KnobFlag;
  field: keyof PipelineQuery;
  parse(text: string | boolean): PipelineQuery[keyof PipelineQuery];
  /** The stall the flag changes: a profile that saw none of it names the flag in a caveat; absent: never named. */
  stall?: 'saves' | 'epochs';
}

const saveMode = (mode: 'sync' | 'async', syntax: string, help: string): PipelineKnob => ({
  name: syntax.slice(2),
  flag: { syntax, help },
  field: 'saveMode',
  parse: () => mode,
  stall: 'saves',
});

/** The pipeline knobs, in --help order. */
export const PIPELINE_KNOBS: readonly PipelineKnob[] = [
  {
    name: 'checkpoint-every',
    flag: { syntax: '--checkpoint-every <k>', help: 'iterations between checkpoint saves (default: as profiled)' },
    field: 'checkpointEvery',
    parse: (text) => parsePositiveInt(String(text), '--checkpoint-every'),
    stall: 'saves',
  },
  {
    name: 'write-bw',
    flag: {
      syntax: '--write-bw <rate>',
      help: 'bytes/s a checkpoint save writes at, e.g. 200MB/s (default: as the profiled saves wrote)',
    },
    field: 'writeBytesPerSec',
    parse: (text) => parseRate(String(text), '--write-bw'),
    stall: 'saves',
  },
  saveMode(
    'async',
    '--async-save',
    'saves staged and written in the background (torch.distributed.checkpoint.async_save), the loop blocked ' +
      'for the staging only',
  ),
  saveMode('sync', '--sync-save', 'saves that block the loop until written (torch.save)'),
  {
    name: 'checkpoint-budget',
    flag: {
      syntax: '--checkpoint-budget <pct>',
      help: "checkpointing's share of the training time to keep under, for the interval it needs (CheckFreq)",
      defaultValue: percent(CHECKFREQ_OVERHEAD_BUDGET),
    },
    field: 'overheadBudget',
    parse: (text) => parseFraction(String(text), '--checkpoint-budget'),
  },
  {
    name: 'failures-per-day',
    flag: {
      syntax: '--failures-per-day <n>',
      help:
        'failures a day to expect: the work a failure loses at the asked interval, and the interval that loses ' +
        'least with the saves (Young)',
    },
    field: 'failuresPerDay',
    parse: (text) => parsePositiveNumber(String(text), '--failures-per-day'),
    stall: 'saves',
  },
  {
    name: 'persistent-workers',
    flag: {
      syntax: '--persistent-workers [bool]',
      help: 'DataLoader persistent_workers: workers kept across epochs (true, or false)',
    },
    field: 'persistentWorkers',
    parse: (value) => parseBoolean(value, '--persistent-workers'),
    stall: 'epochs',
  },
  {
    name: 'prefetch-factor',
    flag: { syntax: '--prefetch-factor <n>', help: 'DataLoader prefetch_factor: batches each worker prepares ahead' },
    field: 'prefetchFactor',
    parse: (text) => parsePositiveInt(String(text), '--prefetch-factor'),
    stall: 'epochs',
  },
];

/** Parses every pipeline flag given; each error names its flag. */
export function parsePipelineFlags(raw: RawKnobFlags): PipelineQuery {
  if (raw.asyncSave && raw.syncSave) throw new UserError(KNOB_TEXT.twoSaveModes, ExitCode.Usage);
  const query: Record<string, unknown> = {};
  for (const knob of PIPELINE_KNOBS) {
    const value = raw[knobAttribute(knob)];
    if (value !== undefined && value !== false) query[knob.field] = knob.parse(value);
  }
  return query as PipelineQuery;
}

/** The flags asked that change `stall`, each field once (--async-save/--sync-save set one), in --help order. */
export function askedPipelineFlags(query: PipelineQuery, stall: PipelineKnob['stall']): string[] {
  const knobs = PIPELINE_KNOBS.filter((k) => k.stall === stall && query[k.field] !== undefined);
  const fields = [...new Set(knobs.map((k) => k.field))];
  return fields.map((field) =>
    knobs
      .filter((k) => k.field === field)
      .map((k) => `--${k.name}`)
      .join('/'),
  );
}

/** A flag's optional true/false value: given alone, true. */
function parseBoolean(value: string | boolean, flag: string): boolean {
  if (typeof value === 'boolean') return value;
  const text = value.toLowerCase();
  if (['true', 'yes', '1', 'on'].includes(text)) return true;
  if (['false', 'no', '0', 'off'].includes(text)) return false;
  throw new UserError(KNOB_TEXT.notBoolean(flag, value), ExitCode.BadValue);
}
