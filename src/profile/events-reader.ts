import { openSync, readSync, closeSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import {
  EventSchema,
  type BlockEvent,
  type SnapshotEvent,
  type CheckpointEvent,
  type EndEvent,
  type EpochEvent,
  type IterEvent,
  type StartEvent,
} from '../schema/events.js';
import type { Iteration, NodeIdentity } from '../schema/profile.js';
import type { CpuAccount, CpuLedger } from '../system/kernel/cpu-ledger.js';
import { checkedIterEvent } from '../schema/iter-check.js';
import { STAGES_FILE } from './stage-files.js';

/** What the events of one process said so far. */
export interface ProcessEvents {
  /** Events file. */
  file: string;
  /** The start event, once seen. */
  start: StartEvent | null;
  /** Iterations in arrival order. */
  iterations: Iteration[];
  /** The end event, once seen. */
  end: EndEvent | null;
  /** Checkpoint saves, in arrival order. */
  checkpoints: CheckpointEvent[];
  /** The training loader's epoch starts, in arrival order. */
  epochs: EpochEvent[];
  /** Switches of mode within the launch (DSA_CONTROL_FILE), in arrival order. */
  blocks: BlockEvent[];
  /** profile --continue: the synthetic blocks' state taken and put back (or refused). */
  snapshots: SnapshotEvent[];
  /** Lines that were not valid protocol v1 events. */
  badLines: number;
  /** First bad line, shortened, for the error message. */
  firstBadLine: string | null;
  /** Lines read in total. */
  lines: number;
}

/** The machine a process ran on, as its start event says; else the CLI's (`localHostname`), node 0. */
export function processNode(events: Pick<ProcessEvents, 'start'>, localHostname: string): NodeIdentity {
  return { hostname: events.start?.hostname ?? localHostname, nodeRank: events.start?.nodeRank ?? 0 };
}

const CHUNK_BYTES = 1 << 20;

/** Whole lines appended to files since the last read: a line without its newline yet waits for the next read. */
export class AppendedLines {
  private readonly files = new Map<string, { offset: number; rest: string }>();

  /** Calls `onLine` with each whole line appended to `path` since the last call; nothing while it cannot be read. */
  read(path: string, onLine: (line: string) => void): void {
    const file = this.files.get(path) ?? { offset: 0, rest: '' };
    this.files.set(path, file);
    let size: number;
    let fd: number;
    try {
      // One stat a poll for a file with nothing new (most polls): no open, no read.
      size = statSync(path).size;
      if (size <= file.offset) return;
      fd = openSync(path, 'r');
    } catch {
      return;
    }
    try {
      const buffer = Buffer.alloc(Math.min(CHUNK_BYTES, size - file.offset));
      while (file.offset < size) {
        const read = readSync(fd, buffer, 0, buffer.length, file.offset);
        if (read <= 0) break;
        file.offset += read;
        const text = file.rest + buffer.toString('utf8', 0, read);
        const lastNewline = text.lastIndexOf('\n');
        file.rest = text.slice(lastNewline + 1);
        if (lastNewline >= 0) for (const line of text.slice(0, lastNewline).split('\n')) onLine(line);
      }
    } finally {
      closeSync(fd);
    }
  }

  /** Each file's text after its last newline (a last line never ended), taken: a later read starts after it. */
  takeRests(): [path: string, rest: string][] {
    return [...this.files].map(([path, file]) => {
      const rest = file.rest;
      file.rest = '';
      return [path, rest];
    });
  }
}

/** Reads the job's event files as it writes them: a bad line is counted, a half-written one waits for its newline. */
export class EventsReader {
  private readonly appended = new AppendedLines();
  private readonly byFile = new Map<string, ProcessEvents>();
  private readonly cpu: CpuAccount | undefined;

  /** `options.ledger`: charged with the CPU of each poll, as 'events'. */
  constructor(
    private readonly dir: string,
    options: { ledger?: CpuLedger } = {},
  ) {
    this.cpu = options.ledger?.account('events');
  }

  /** Reads whatever was appended since the last call; returns one entry per events file. */
  poll(): ProcessEvents[] {
    return this.cpu ? this.cpu.charge(() => this.readAll()) : this.readAll();
  }

  private readAll(): ProcessEvents[] {
    let names: string[];
    try {
      // The loader processes' stage totals (stages-<pid>.jsonl) are not events: stage-files.ts reads them.
      names = readdirSync(this.dir).filter((name) => name.endsWith('.jsonl') && !STAGES_FILE.test(name));
    } catch {
      names = [];
    }
    for (const name of names.sort()) this.readNew(join(this.dir, name));
    return [...this.byFile.values()];
  }

  /** Reads the rest, treating a final line without newline as complete. */
  finish(): ProcessEvents[] {
    const all = this.poll();
    for (const [file, rest] of this.appended.takeRests()) this.consumeLine(this.byFile.get(file)!, rest);
    return all;
  }

  private readNew(file: string): void {
    const events: ProcessEvents = this.byFile.get(file) ?? {
      file,
      start: null,
      iterations: [],
      end: null,
      checkpoints: [],
      epochs: [],
      blocks: [],
      snapshots: [],
      badLines: 0,
      firstBadLine: null,
      lines: 0,
    };
    this.byFile.set(file, events);
    this.appended.read(file, (line) => this.consumeLine(events, line));
  }

  private consumeLine(events: ProcessEvents, line: string): void {
    if (line.trim() === '') return;
    events.lines++;
    let parsed: ReturnType<typeof EventSchema.safeParse>;
    try {
      const value: unknown = JSON.parse(line);
      // The iteration, most lines, checked by hand; anything else (or anything the check does not vouch for) by the
      // schema.
      const iter = checkedIterEvent(value);
      if (iter !== null) {
        events.iterations.push(toIteration(iter));
        return;
      }
      // A few of these a process (start, end, saves, epochs, blocks): compiling zod's checks costs more than it saves.
      parsed = EventSchema.safeParse(value, { jitless: true });
    } catch {
      parsed = { success: false } as ReturnType<typeof EventSchema.safeParse>;
    }
    if (!parsed.success) {
      events.badLines++;
      events.firstBadLine ??= line.length > 80 ? `${line.slice(0, 77)}...` : line;
      return;
    }
    const event = parsed.data;
    if (event.type === 'start') events.start = event;
    else if (event.type === 'end') events.end = event;
    else if (event.type === 'checkpoint') events.checkpoints.push(event);
    else if (event.type === 'epoch') events.epochs.push(event);
    else if (event.type === 'block') events.blocks.push(event);
    else if (event.type === 'snapshot') events.snapshots.push(event);
    else events.iterations.push(toIteration(event));
  }
}

function toIteration(event: IterEvent): Iteration {
  const iteration: Iteration = {
    i: event.i,
    t: event.t,
    waitMs: event.waitMs,
    computeMs: event.computeMs,
    samples: event.samples,
  };
  if (event.bytes !== undefined) iteration.bytes = event.bytes;
  if (event.processCpuMs !== undefined) iteration.processCpuMs = event.processCpuMs;
  return iteration;
}
