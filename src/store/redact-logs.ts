// The job's logs and event files under a profile's artefacts, redacted as the profile is (--redact) once it ends; a CLI
// killed with SIGKILL leaves them as written (docs/side-effects.md).
import { readFileSync, writeFileSync } from 'node:fs';
import { basename } from 'node:path';
import { filesUnder } from './files-under.js';
import type { Redactor } from './redact.js';

/** The log files a run leaves: its output, and its events (events/*.jsonl, docs/protocol.md). */
const isLog = (name: string): boolean => name === 'stdout.log' || name === 'stderr.log' || name.endsWith('.jsonl');

/** Redacts every stdout.log, stderr.log and events file under `dir`; returns how many it read. */
export function redactLogs(dir: string, redactor: Redactor): number {
  const logs = filesUnder(dir).filter((path) => isLog(basename(path)));
  for (const path of logs) {
    const text = readFileSync(path, 'utf8');
    const redacted = redactor.text(text);
    if (redacted !== text) writeFileSync(path, redacted);
  }
  return logs.length;
}
