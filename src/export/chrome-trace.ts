/**
 * A profile's iterations as a Chrome Trace Event file (the JSON format that Perfetto and chrome://tracing open; "Trace
 * Event Format", Google, 2016): one process a mode (or sweep point), one thread a rank, and on each thread every
 * iteration as a complete event ("ph": "X") holding its data wait and its step, the checkpoint saves, and each epoch's
 * iter(loader).
 *
 * Timestamps are wall-clock microseconds since the Unix epoch, the clock the job's events carry, so the tracks sit at
 * the same times as a PyTorch Profiler trace of the same run. Each boundary is rounded to a whole microsecond once and
 * every event's ts and dur are taken from the rounded boundaries, so a wait and a step always nest inside their
 * iteration.
 */
import type { CheckpointRecord, Iteration, Profile, RankResult } from '../schema/profile.js';
import {
  blockingMs,
  DEFAULT_VARIANT,
  modeSeries,
  runOf,
  savesByIteration,
  warmupOf,
  type ModeSeries,
} from './iteration-rows.js';

/** One trace event (only the fields this file writes). */
export interface TraceEvent {
  name: string;
  ph: 'X' | 'M' | 'i';
  pid: number;
  tid: number;
  /** µs since the Unix epoch; absent on metadata events. */
  ts?: number;
  /** µs. */
  dur?: number;
  cat?: string;
  /** Instant events: their scope, 't' (the thread). */
  s?: 't';
  args?: Record<string, unknown>;
}

/** The trace file's JSON object. */
export interface ChromeTrace {
  /**
   * What ts = 0 is, ns since the Unix epoch: 0, as ts is absolute. PyTorch Profiler traces from torch 2.4 on write ts
   * relative to this field, and tools that merge traces shift each by it; older ones write absolute ts.
   */
  baseTimeNanoseconds: 0;
  displayTimeUnit: 'ms';
  traceEvents: TraceEvent[];
  otherData: Record<string, string>;
}

/** Where a save with no clock time is drawn, said on the event itself. */
const IN_STEP_PLACE = 'drawn at the end of its step: the profile keeps which step a save ran in, not its clock time';
const BETWEEN_PLACE =
  'drawn after the previous iteration: the profile keeps which iteration a save preceded, not its clock time';

/** The profile as a trace. */
export function chromeTrace(profile: Profile): ChromeTrace {
  const events: TraceEvent[] = [];
  modeSeries(profile).forEach((series, index) => {
    const pid = index + 1;
    const name = series.variant === DEFAULT_VARIANT ? series.mode : `${series.mode} (${series.variant})`;
    events.push({ name: 'process_name', ph: 'M', pid, tid: 0, args: { name: `ds-analyzer ${name}` } });
    events.push({ name: 'process_sort_index', ph: 'M', pid, tid: 0, args: { sort_index: pid } });
    for (const rank of [...series.result.ranks].sort((a, b) => a.rank - b.rank)) {
      const host = rank.node?.hostname ?? profile.host.hostname;
      events.push({ name: 'thread_name', ph: 'M', pid, tid: rank.rank, args: { name: `rank ${rank.rank} (${host})` } });
      events.push({ name: 'thread_sort_index', ph: 'M', pid, tid: rank.rank, args: { sort_index: rank.rank } });
      events.push(...rankEvents(series, rank, pid));
    }
  });
  return {
    baseTimeNanoseconds: 0,
    displayTimeUnit: 'ms',
    traceEvents: events,
    otherData: {
      tool: `${profile.tool.name} ${profile.tool.version}`,
      job: profile.jobName,
      profileCreatedAt: profile.createdAt,
      clock: 'ts: wall-clock microseconds since the Unix epoch',
    },
  };
}

/** A time in ms since the epoch as whole µs. */
function us(ms: number): number {
  return Math.round(ms * 1000);
}

/** Complete events on one thread, each from `fromMs` to `toMs`, both rounded to whole µs. */
function slicesOn(pid: number, tid: number) {
  return (name: string, cat: string, fromMs: number, toMs: number, args?: Record<string, unknown>): TraceEvent => {
    const ts = us(fromMs);
    return { name, cat, ph: 'X', pid, tid, ts, dur: Math.max(0, us(toMs) - ts), ...(args ? { args } : {}) };
  };
}

function rankEvents(series: ModeSeries, rank: RankResult, pid: number): TraceEvent[] {
  const tid = rank.rank;
  const runStarts = (series.result.passes ?? []).map((pass) => pass.startedAt);
  const epochs = new Map((rank.epochs ?? []).map((e) => [e.i, e]));
  const saves = savesByIteration(rank.checkpoints ?? []);
  const warmup = warmupOf(rank);
  const slice = slicesOn(pid, tid);
  const events: TraceEvent[] = [];
  let previous: Iteration | null = null;
  for (const [index, it] of [...rank.iterations].sort((a, b) => a.i - b.i).entries()) {
    const endMs = it.t;
    const batchMs = it.t - it.computeMs;
    const startMs = batchMs - it.waitMs;
    const epoch = epochs.get(it.i);
    if (epoch) {
      events.push({
        name: `epoch ${epoch.epoch}`,
        cat: 'epoch',
        ph: 'i',
        s: 't',
        pid,
        tid,
        ts: us(startMs - epoch.createMs),
        args: { epoch: epoch.epoch, firstIteration: it.i },
      });
      events.push(
        slice('iter(loader)', 'epoch', startMs - epoch.createMs, startMs, {
          epoch: epoch.epoch,
          createMs: epoch.createMs,
          ...(epoch.workers !== undefined ? { workers: epoch.workers } : {}),
        }),
      );
    }
    let at = previous ? previous.t : startMs - blockingMs(saves.before.get(it.i) ?? []);
    for (const save of saves.before.get(it.i) ?? []) {
      events.push(
        slice(`checkpoint save (${save.api})`, 'checkpoint', at, at + save.blockingMs, saveArgs(save, BETWEEN_PLACE)),
      );
      at += save.blockingMs;
    }
    events.push(
      slice('iteration', 'iteration', startMs, endMs, {
        iteration: it.i,
        run: runOf(runStarts, it.t),
        samples: it.samples,
        waitMs: it.waitMs,
        computeMs: it.computeMs,
        ...(warmup(it, index) ? { warmup: true } : {}),
      }),
      slice('data wait', 'data', startMs, batchMs),
      slice('step', 'step', batchMs, endMs),
    );
    // Saves in the step, back to back, ending with it (never starting before it).
    const inStep = saves.inStep.get(it.i) ?? [];
    let from = Math.max(batchMs, endMs - blockingMs(inStep));
    for (const save of inStep) {
      const to = Math.min(endMs, from + save.blockingMs);
      events.push(slice(`checkpoint save (${save.api})`, 'checkpoint', from, to, saveArgs(save, IN_STEP_PLACE)));
      from = to;
    }
    previous = it;
  }
  return events;
}

function saveArgs(save: CheckpointRecord, placement: string): Record<string, unknown> {
  return {
    api: save.api,
    blockingMs: save.blockingMs,
    syncMs: save.syncMs,
    bytes: save.bytes,
    persisted: save.persisted,
    placement,
  };
}
