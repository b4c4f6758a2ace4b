// The stage totals the training loader's processes write (python/ds_analyzer/_stages.py): one stages-<pid>.jsonl per
// process beside the events files, cumulative lines. Read once, when the launch is over; a block's share is the
// difference of each file's totals across the block's time.
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { StagesEventSchema, type StagesEvent } from '../schema/events.js';
import type { PrepStageTotals } from '../schema/profile.js';

/** A stages file's name: not an events file (events-reader.ts passes it over). */
export const STAGES_FILE = /^stages-\d+\.jsonl$/;

/** Each process's valid lines, in the order written; a line that does not parse is skipped (lenient, as events are). */
export function readStageFiles(dir: string): StagesEvent[][] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => STAGES_FILE.test(name));
  } catch {
    return [];
  }
  const files: StagesEvent[][] = [];
  for (const name of names.sort()) {
    let text: string;
    try {
      text = readFileSync(join(dir, name), 'utf8');
    } catch {
      continue;
    }
    const lines: StagesEvent[] = [];
    for (const line of text.split('\n')) {
      if (line.trim() === '') continue;
      try {
        const parsed = StagesEventSchema.safeParse(JSON.parse(line), { jitless: true });
        if (parsed.success) lines.push(parsed.data);
      } catch {
        // a half-written last line of a killed worker
      }
    }
    if (lines.length > 0) files.push(lines);
  }
  return files;
}

/**
 * The processes' stage totals between two times (null `fromMs`: from the start): per file, its last line by `toMs` less
 * its last before `fromMs`; edges as coarse as a line's 250 ms, which per-sample ratios do not mind. Null when no
 * process built a batch in the window.
 */
export function stageTotalsBetween(
  files: readonly StagesEvent[][],
  fromMs: number | null,
  toMs: number | null,
): PrepStageTotals | null {
  const total: PrepStageTotals = { processes: 0, samples: 0, batches: 0, fetchMs: 0, fetchCpuMs: 0, stages: [] };
  const byKey = new Map<string, PrepStageTotals['stages'][number]>();
  for (const lines of files) {
    const end = lastAtOrBefore(lines, toMs);
    if (end === null) continue;
    const begin = fromMs === null ? null : lastAtOrBefore(lines, fromMs);
    const samples = end.samples - (begin?.samples ?? 0);
    if (samples <= 0) continue;
    total.processes += 1;
    total.samples += samples;
    total.batches += end.batches - (begin?.batches ?? 0);
    total.fetchMs += end.fetchMs - (begin?.fetchMs ?? 0);
    total.fetchCpuMs += end.fetchCpuMs - (begin?.fetchCpuMs ?? 0);
    const before = new Map((begin?.stages ?? []).map((s) => [`${s.kind}\0${s.name}`, s]));
    for (const stage of end.stages) {
      const key = `${stage.kind}\0${stage.name}`;
      const was = before.get(key);
      const ms = stage.ms - (was?.ms ?? 0);
      const calls = stage.calls - (was?.calls ?? 0);
      if (calls <= 0) continue;
      const into = byKey.get(key) ?? { kind: stage.kind, name: stage.name, ms: 0, calls: 0 };
      into.ms += Math.max(0, ms);
      into.calls += calls;
      byKey.set(key, into);
    }
  }
  if (total.samples === 0) return null;
  total.stages = [...byKey.values()];
  return total;
}

function lastAtOrBefore(lines: readonly StagesEvent[], ms: number | null): StagesEvent | null {
  if (ms === null) return lines[lines.length - 1] ?? null;
  let found: StagesEvent | null = null;
  for (const line of lines) if (line.t <= ms) found = line;
  return found;
}
