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

/**
 * The one non-negative integer a kernel file holds (a /proc/sys limit, a
 * cgroup counter), surrounding whitespace allowed; null for a file that could
 * not be read (null) or holds anything else ('max', a list).
 */
export function parseKernelNumber(text: string | null): number | null {
  const trimmed = text?.trim() ?? '';
  return /^\d+$/.test(trimmed) ? Number(trimmed) : null;
}
