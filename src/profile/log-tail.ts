import { readFileSync } from 'node:fs';

/** The last `lines` lines of a log file, or '' when it cannot be read. */
export function tail(path: string, lines: number): string {
  try {
    const text = readFileSync(path, 'utf8').trimEnd();
    return text.split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}
