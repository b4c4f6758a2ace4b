/**
 * The job's own output under a profile's artefact folder (each run's
 * stdout.log and stderr.log, and its event files, which name its host),
 * rewritten with --redact's redaction: the same
 * host names, paths and secrets out as in the profile. The job writes them
 * while it runs, so they are redacted once the profile ends; a CLI killed
 * with SIGKILL leaves them as written (docs/side-effects.md).
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redactor } from './redact.js';

/** The log files a run leaves: its output, and its events (events/*.jsonl, docs/protocol.md). */
const isLog = (name: string): boolean => name === 'stdout.log' || name === 'stderr.log' || name.endsWith('.jsonl');

/** Redacts every stdout.log, stderr.log and events file under `dir`; returns how many it read. */
export function redactLogs(dir: string, redactor: Redactor): number {
  let rewritten = 0;
  const stack = [dir];
  while (stack.length > 0) {
    const here = stack.pop()!;
    let entries;
    try {
      entries = readdirSync(here, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = join(here, e.name);
      if (e.isDirectory()) stack.push(path);
      else if (e.isFile() && isLog(e.name)) {
        const text = readFileSync(path, 'utf8');
        const redacted = redactor.text(text);
        if (redacted !== text) writeFileSync(path, redacted);
        rewritten++;
      }
    }
  }
  return rewritten;
}
