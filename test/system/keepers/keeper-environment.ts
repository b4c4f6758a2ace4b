import fs from 'node:fs';
import { loadLibc } from '../../../src/system/kernel/libc.js';

/**
 * Why this machine cannot run an inotify keeper, judged from the machine and
 * not from the keeper under test: no inotify in the kernel, or no libc to
 * bind. Null when it can: a keeper that then falls back is a failure, not a
 * skip.
 */
export function inotifyUnavailable(): string | null {
  if (!fs.existsSync('/proc/sys/fs/inotify/max_user_watches'))
    return 'the kernel has no inotify (/proc/sys/fs/inotify missing)';
  const libc = loadLibc();
  return libc.ok ? null : `libc cannot be bound: ${libc.reason}`;
}

/**
 * Why this machine cannot run a fanotify keeper: not root (fanotify with
 * descriptors needs CAP_SYS_ADMIN), no fanotify in the kernel, or no libc.
 * Null when it can (CI runs as root): a keeper that then falls back fails.
 */
export function fanotifyUnavailable(): string | null {
  if (process.geteuid?.() !== 0) return 'fanotify needs root (CAP_SYS_ADMIN)';
  if (!fs.existsSync('/proc/sys/fs/fanotify')) return 'the kernel has no fanotify (/proc/sys/fs/fanotify missing)';
  const libc = loadLibc();
  return libc.ok ? null : `libc cannot be bound: ${libc.reason}`;
}
