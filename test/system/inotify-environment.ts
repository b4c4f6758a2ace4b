import fs from 'node:fs';
import { loadLibc } from '../../src/system/libc.js';

/**
 * Why this machine cannot run an inotify keeper, judged from the machine and
 * not from the keeper under test: no inotify in the kernel, or no libc to
 * bind. Null when it can: a keeper that then falls back is a failure, not a
 * skip.
 */
export function inotifyUnavailable(): string | null {
  if (!fs.existsSync('/proc/sys/fs/inotify/max_user_watches')) return 'the kernel has no inotify (/proc/sys/fs/inotify missing)';
  const libc = loadLibc();
  return libc.ok ? null : `libc cannot be bound: ${libc.reason}`;
}
