import { readFileSync } from 'node:fs';

/**
 * A small kernel file (/proc, /sys) as text, or null when it cannot be read:
 * ENOENT/ESRCH when the process or group is gone, EACCES for another user's.
 */
export function readTextOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}
