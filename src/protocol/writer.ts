import { closeSync, existsSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { join, resolve as resolvePath } from 'node:path';
import { performance } from 'node:perf_hooks';
import { ExitCode, UserError, valueError } from '../errors.js';
import { PROTOCOL_TEXT } from './protocol-text.js';
import { readTextOrNull } from '../system/kernel/read-text.js';
import type { z } from 'zod';
import {
  BlockEventSchema,
  CheckpointEventSchema,
  ENV,
  EpochEventSchema,
  MAX_HOSTNAME_CHARS,
  ModeSchema,
  NODE_RANK_ENV,
  PROTOCOL_VERSION,
  type EndEvent,
  type LoaderSettings,
  type Mode,
} from '../schema/events.js';

// Job-side writer of the event protocol v1 (src/schema/events.ts), for any JS/TS job. `iter()` runs once an iteration,
// so it costs microseconds: lines are concatenated (no JSON.stringify), buffered, and written at most every
// `flushIntervalMs` or past `maxBufferChars`, and always on `end()`, `close()` and process exit.

/** Reason a job stopped iterating, as recorded in the end event. */
export type EndReason = EndEvent['reason'];

/** One checkpoint save, as `checkpoint()` takes it: CheckpointEventSchema's fields after v, type, t and rank. */
export type CheckpointInfo = Omit<z.input<typeof CheckpointEventSchema>, 'v' | 'type' | 't' | 'rank'>;

/** The start of a training-loader epoch, as `epoch()` takes it: EpochEventSchema's fields after v, type, t, rank. */
export type EpochInfo = Omit<z.input<typeof EpochEventSchema>, 'v' | 'type' | 't' | 'rank'>;

/** A switch of mode, as `block()` takes it: BlockEventSchema's fields after v, type, t and rank. */
export type BlockInfo = Omit<z.input<typeof BlockEventSchema>, 'v' | 'type' | 't' | 'rank'>;

/** Facts about the job that go into the start event. */
export interface StartInfo {
  /** Samples per batch as configured. */
  batchSize?: number;
  /** Loader workers (processes or threads). */
  workers?: number;
  /** Who writes the events: 'emulator', 'manual', ... */
  source?: string;
  /** Samples kept after restricting the dataset to DSA_SUBSET_FILE (only when the job did restrict it). */
  subsetFiles?: number;
  /** What the job found when asked to restrict itself to DSA_SUBSET_FILE. */
  subsetNote?: string;
  /** The training loader's settings (num_workers as run and as the script set it). */
  loader?: LoaderSettings;
  /** True when the job switches modes at DSA_CONTROL_FILE's request (see ControlFile). */
  switchModes?: boolean;
}

/** Options of `EventWriter.open`. */
export interface EventWriterOptions extends StartInfo {
  /** Folder of the events files (DSA_EVENTS_DIR); created if missing. */
  dir: string;
  /** Mode the job runs in (echo of DSA_MODE). */
  mode: Mode;
  /** Rank of this process in a data-parallel job. */
  rank?: number;
  /** Number of ranks in the job. */
  worldSize?: number;
  /** Rank of this process's machine among the job's nodes (default 0). */
  nodeRank?: number;
  /** Host name of this process's machine (default: os.hostname()). */
  hostname?: string;
  /** Process id written into the file name and start event. */
  pid?: number;
  /** Longest time buffered lines wait before they are written, ms. */
  flushIntervalMs?: number;
  /** Buffer size, in characters, that forces a write. */
  maxBufferChars?: number;
  /** Wall clock in ms since the Unix epoch (fractional); tests pass a fake. */
  clock?: () => number;
  /** Write buffered lines when the process exits without `end()` (crash, process.exit). */
  flushOnExit?: boolean;
  /** Where a failed write is reported once; default: stderr. */
  warn?: (message: string) => void;
}

/** Environment of a profiled job, as the CLI sets it (names in ENV). */
export interface ProtocolEnv {
  /** DSA_MODE; undefined when the job runs unprofiled. */
  mode?: Mode;
  /** DSA_EVENTS_DIR. */
  eventsDir?: string;
  /** DSA_ITERATIONS: iteration budget. */
  iterations?: number;
  /** DSA_STOP_FILE: a file whose existence asks the job to stop. */
  stopFile?: string;
  /** DSA_SYNC=1: synchronise the accelerator at iteration boundaries. */
  sync: boolean;
  /** RANK (torchrun), 0 when unset. */
  rank: number;
  /** WORLD_SIZE (torchrun), 1 when unset. */
  worldSize: number;
  /** The node's rank: the first of NODE_RANK_ENV that is set (GROUP_RANK, NODE_RANK, SLURM_NODEID), 0 when none is. */
  nodeRank: number;
  /** DSA_SUBSET_FILE: the resident files a cached mode asks the job to sample from (see restrictToSubset). */
  subsetFile?: string;
  /** DSA_NUM_WORKERS: the loader workers this run asks for (profile --workers). */
  numWorkers?: number;
  /** DSA_CONTROL_FILE: the file that switches the job's mode within one launch (see ControlFile). */
  controlFile?: string;
}

/** Wall clock of the protocol: ms since the Unix epoch, fractional and monotonic within a process. */
export function wallClockMs(): number {
  return performance.timeOrigin + performance.now();
}

const DEFAULT_FLUSH_INTERVAL_MS = 100;
const DEFAULT_MAX_BUFFER_CHARS = 64 * 1024;

/** Path of the events file of one process: `${dir}/events-${rank}-${pid}.jsonl`. */
export function eventsFilePath(dir: string, rank: number, pid: number): string {
  return join(dir, `events-${rank}-${pid}.jsonl`);
}

export class EventWriter {
  /** Path of the events file. */
  readonly path: string;
  private fd: number | undefined;
  private buffer = '';
  private lastFlushMs: number;
  private ended = false;
  private readonly iterPrefix: string;
  private readonly endPrefix: string;
  private readonly rankField: string;
  private readonly rank: number;
  private readonly clock: () => number;
  private readonly flushIntervalMs: number;
  private readonly maxBufferChars: number;
  private readonly warn: (message: string) => void;
  private readonly onExit = (): void => this.flush();
  private readonly exitHookInstalled: boolean;

  private constructor(options: EventWriterOptions) {
    const rank = options.rank ?? 0;
    const pid = options.pid ?? process.pid;
    this.clock = options.clock ?? wallClockMs;
    this.flushIntervalMs = options.flushIntervalMs ?? DEFAULT_FLUSH_INTERVAL_MS;
    this.maxBufferChars = options.maxBufferChars ?? DEFAULT_MAX_BUFFER_CHARS;
    this.warn = options.warn ?? ((message) => process.stderr.write(`${message}\n`));
    this.path = eventsFilePath(options.dir, rank, pid);
    this.rank = rank;
    this.rankField = `,"rank":${rank}`;
    this.iterPrefix = `{"v":${PROTOCOL_VERSION},"type":"iter","t":`;
    this.endPrefix = `{"v":${PROTOCOL_VERSION},"type":"end","t":`;

    mkdirSync(options.dir, { recursive: true });
    this.fd = openSync(this.path, 'a');
    const t = this.clock();
    this.lastFlushMs = t;
    const start: Record<string, unknown> = {
      v: PROTOCOL_VERSION,
      type: 'start',
      t,
      rank,
      pid,
      worldSize: options.worldSize ?? 1,
      mode: options.mode,
      hostname: (options.hostname ?? hostname()).slice(0, MAX_HOSTNAME_CHARS),
      nodeRank: options.nodeRank ?? 0,
    };
    for (const key of ['batchSize', 'workers', 'source', 'subsetFiles', 'subsetNote', 'loader', 'switchModes'] as const)
      if (options[key] !== undefined) start[key] = options[key];
    if (options.subsetNote !== undefined) start.subsetNote = options.subsetNote.slice(0, 1000);
    // The start event is written at once: the CLI takes it as proof that the job reached its loop.
    this.buffer = JSON.stringify(start) + '\n';
    this.flush();

    this.exitHookInstalled = options.flushOnExit ?? true;
    if (this.exitHookInstalled) process.on('exit', this.onExit);
  }

  /** Opens the events file of this process and writes the start event. */
  static open(options: EventWriterOptions): EventWriter {
    return new EventWriter(options);
  }

  /**
   * Records one iteration: `waitMs` waited for the batch, `computeMs` from it to asking for the next, `bytes` read for
   * it when known. Negative times (clock jitter) are recorded as 0; non-finite ones throw.
   */
  iter(i: number, waitMs: number, computeMs: number, samples: number, bytes?: number): void {
    if (this.fd === undefined) return;
    if (!Number.isFinite(waitMs) || !Number.isFinite(computeMs) || (bytes !== undefined && !Number.isFinite(bytes))) {
      throw new RangeError(`EventWriter.iter: times and bytes must be finite numbers (iteration ${i})`);
    }
    if (!Number.isInteger(i) || i < 0 || !Number.isInteger(samples) || samples < 0) {
      throw new RangeError(`EventWriter.iter: i and samples must be non-negative integers (got ${i}, ${samples})`);
    }
    const t = this.clock();
    let line =
      this.iterPrefix +
      t +
      this.rankField +
      ',"i":' +
      i +
      ',"waitMs":' +
      (waitMs > 0 ? waitMs : 0) +
      ',"computeMs":' +
      (computeMs > 0 ? computeMs : 0) +
      ',"samples":' +
      samples;
    if (bytes !== undefined) line += ',"bytes":' + (bytes > 0 ? bytes : 0);
    this.buffer += line + '}\n';
    if (t - this.lastFlushMs >= this.flushIntervalMs || this.buffer.length >= this.maxBufferChars) {
      this.lastFlushMs = t;
      this.flush();
    }
  }

  /** Records a checkpoint save (docs/protocol.md), written at once; a RangeError for a value the schema rejects. */
  checkpoint(info: CheckpointInfo): void {
    this.rareEvent(CheckpointEventSchema, 'checkpoint', info);
    this.flush();
  }

  /** Records an epoch's start once its first batch arrived (docs/protocol.md), buffered; a RangeError as checkpoint. */
  epoch(info: EpochInfo): void {
    this.rareEvent(EpochEventSchema, 'epoch', info);
  }

  /** Records a switch of mode (docs/protocol.md, `block`; `i` its first iteration), written at once. */
  block(info: BlockInfo): void {
    this.rareEvent(BlockEventSchema, 'block', info);
    this.flush();
  }

  private rareEvent(
    schema: typeof CheckpointEventSchema | typeof EpochEventSchema | typeof BlockEventSchema,
    type: 'checkpoint' | 'epoch' | 'block',
    info: object,
  ): void {
    if (this.fd === undefined || this.ended) return;
    const event = { v: PROTOCOL_VERSION, type, t: this.clock(), rank: this.rank, ...info };
    const parsed = schema.safeParse(event);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      throw new RangeError(`EventWriter.${type}: ${issue.path.join('.')}: ${issue.message}`);
    }
    // The object as given (JSON.stringify drops undefined fields), not the parsed one with its defaults filled in.
    this.buffer += JSON.stringify(event) + '\n';
  }

  /** Writes the end event, flushes and closes the file. Later calls do nothing. */
  end(reason: EndReason, iterations: number): void {
    if (this.fd === undefined || this.ended) return;
    this.ended = true;
    this.buffer +=
      this.endPrefix + this.clock() + this.rankField + ',"reason":"' + reason + '","iterations":' + iterations + '}\n';
    this.close();
  }

  /** Writes buffered lines now. */
  flush(): void {
    if (this.fd === undefined || this.buffer.length === 0) return;
    const text = this.buffer;
    this.buffer = '';
    try {
      writeSync(this.fd, text);
    } catch (error) {
      // A profiler must not kill the training it observes: report once and stop writing.
      this.warn(
        `ds-analyzer: cannot write events to ${this.path} (${(error as Error).message}); events of this process ` +
          `are lost`,
      );
      this.release();
    }
  }

  /** Flushes and closes without an end event (the job was interrupted). */
  close(): void {
    this.flush();
    this.release();
  }

  private release(): void {
    if (this.fd === undefined) return;
    const fd = this.fd;
    this.fd = undefined;
    if (this.exitHookInstalled) process.off('exit', this.onExit);
    try {
      closeSync(fd);
    } catch {
      // Already reported by flush, or nothing left to lose.
    }
  }
}

function parseNonNegativeInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = env[name];
  if (text === undefined || text === '') return fallback;
  const value = Number(text);
  if (!Number.isInteger(value) || value < 0) {
    throw valueError(PROTOCOL_TEXT.notNonNegative(name, text));
  }
  return value;
}

/** Reads the protocol's environment variables; throws a UserError for a malformed value. */
export function readProtocolEnv(env: NodeJS.ProcessEnv = process.env): ProtocolEnv {
  const modeText = env[ENV.mode];
  let mode: Mode | undefined;
  if (modeText !== undefined && modeText !== '') {
    const parsed = ModeSchema.safeParse(modeText);
    if (!parsed.success) {
      throw valueError(PROTOCOL_TEXT.notAMode(ENV.mode, modeText));
    }
    mode = parsed.data;
  }
  const protocol = env[ENV.protocol];
  if (protocol !== undefined && protocol !== '' && protocol !== String(PROTOCOL_VERSION)) {
    throw valueError(PROTOCOL_TEXT.otherProtocol(ENV.protocol, protocol, PROTOCOL_VERSION));
  }
  const iterationsText = env[ENV.iterations];
  let iterations: number | undefined;
  if (iterationsText !== undefined && iterationsText !== '') {
    iterations = Number(iterationsText);
    if (!Number.isInteger(iterations) || iterations <= 0) {
      throw valueError(PROTOCOL_TEXT.notPositive(ENV.iterations, iterationsText));
    }
  }
  const worldSize = parseNonNegativeInt(env, 'WORLD_SIZE', 1);
  const nodeRankName = NODE_RANK_ENV.find((name) => env[name] !== undefined && env[name] !== '');
  return {
    mode,
    eventsDir: env[ENV.eventsDir] || undefined,
    iterations,
    stopFile: env[ENV.stopFile] || undefined,
    sync: env[ENV.sync] === '1',
    rank: parseNonNegativeInt(env, 'RANK', 0),
    worldSize: worldSize > 0 ? worldSize : 1,
    nodeRank: nodeRankName === undefined ? 0 : parseNonNegativeInt(env, nodeRankName, 0),
    ...(env[ENV.subsetFile] ? { subsetFile: env[ENV.subsetFile] } : {}),
    ...(env[ENV.numWorkers] ? { numWorkers: parseNonNegativeInt(env, ENV.numWorkers, 0) } : {}),
    // On several nodes a switch must wait for every node's profiler, which a job without a collective across its ranks
    // cannot tell: it ignores the control file and is started once a mode (docs/multi-node.md).
    ...(env[ENV.controlFile] && parseNonNegativeInt(env, ENV.nodes, 1) <= 1
      ? { controlFile: env[ENV.controlFile] }
      : {}),
  };
}

/**
 * Keeps the `paths` (resolved against the working folder) listed in `subsetFile` (DSA_SUBSET_FILE). A job samples from
 * `kept` and writes its length as subsetFiles (docs/protocol.md); where `kept` is empty it reads all and writes only
 * the note.
 */
export function restrictToSubset(paths: readonly string[], subsetFile: string): { kept: string[]; note: string } {
  let listed: Set<string>;
  try {
    listed = new Set(
      readFileSync(subsetFile, 'utf8')
        .split('\n')
        .filter((line) => line !== ''),
    );
  } catch (error) {
    return { kept: [], note: `cannot read ${subsetFile}: ${(error as NodeJS.ErrnoException).code ?? String(error)}` };
  }
  const kept = paths.filter((p) => listed.has(resolvePath(p)));
  return { kept, note: `kept ${kept.length} of ${paths.length} files` };
}

/** The writer for a job started by ds-analyzer (rank and world from torchrun's), or null when DSA_MODE is unset. */
export function fromEnv(
  env: NodeJS.ProcessEnv = process.env,
  info: StartInfo = {},
  options: Partial<Omit<EventWriterOptions, 'dir' | 'mode'>> = {},
): EventWriter | null {
  const parsed = readProtocolEnv(env);
  if (parsed.mode === undefined) return null;
  if (parsed.eventsDir === undefined) {
    throw new UserError(PROTOCOL_TEXT.noEventsDir(ENV.mode, ENV.eventsDir), ExitCode.Usage);
  }
  return EventWriter.open({
    rank: parsed.rank,
    worldSize: parsed.worldSize,
    nodeRank: parsed.nodeRank,
    ...info,
    ...options,
    dir: parsed.eventsDir,
    mode: parsed.mode,
  });
}

/** A file the job's loop asks about every iteration, looked at most every `intervalMs` (the first call at once). */
class PolledFile {
  private nextCheckMs = -Infinity;

  constructor(
    /** Its path; undefined: never there. */
    readonly path: string | undefined,
    private readonly intervalMs = 100,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  /** The path when it is time to look again, else null. */
  protected due(): string | null {
    if (this.path === undefined) return null;
    const now = this.clock();
    if (now < this.nextCheckMs) return null;
    this.nextCheckMs = now + this.intervalMs;
    return this.path;
  }
}

/** Cheap check of DSA_STOP_FILE: true once the file was seen. */
export class StopFile extends PolledFile {
  private seen = false;

  /** Whether the stop file exists (as of the last check). */
  requested(): boolean {
    const path = this.seen ? null : this.due();
    if (path !== null) this.seen = existsSync(path);
    return this.seen;
  }
}

/** A block the control file asks for: its number and mode. */
export interface ControlBlock {
  block: number;
  mode: Mode;
}

/**
 * Cheap reader of DSA_CONTROL_FILE (one launch, several modes): a block newer than the last one returned, or null. The
 * CLI replaces the file whole (write, then rename), so a read never sees half a line.
 */
export class ControlFile extends PolledFile {
  private block = 0;

  /** The block to switch to now, or null when there is none newer. */
  poll(): ControlBlock | null {
    const path = this.due();
    if (path === null) return null;
    const asked = parseControl(readTextOrNull(path) ?? '');
    if (asked === null || asked.block <= this.block) return null;
    this.block = asked.block;
    return asked;
  }
}

/** The control file's line, `<block> <mode>`, or null for anything else. */
export function parseControl(text: string): ControlBlock | null {
  const [blockText, modeText, ...rest] = text.trim().split(/\s+/);
  const block = Number(blockText);
  const mode = ModeSchema.safeParse(modeText);
  return rest.length === 0 && Number.isInteger(block) && block > 0 && mode.success ? { block, mode: mode.data } : null;
}
