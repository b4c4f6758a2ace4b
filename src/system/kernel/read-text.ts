import { accessSync, closeSync, constants, openSync, readFileSync, readSync } from 'node:fs';

/** A small kernel file (/proc, /sys) as text, or null when it cannot be read (gone, or another user's). */
export function readTextOrNull(path: string): string | null {
  try {
    return readFileSync(path, 'utf8');
  } catch {
    return null;
  }
}

/** The one non-negative integer a kernel file holds; null for a file not read or holding anything else ('max'). */
export function parseKernelNumber(text: string | null): number | null {
  const trimmed = text?.trim() ?? '';
  return /^\d+$/.test(trimmed) ? Number(trimmed) : null;
}

/** A /proc/meminfo field ('MemAvailable', 'Active(file)'), bytes; null when absent or not read. */
export function meminfoBytes(meminfo: string | null, field: string): number | null {
  const match = new RegExp(`^${field.replace(/[()]/g, '\\$&')}:\\s+(\\d+)\\s*kB`, 'm').exec(meminfo ?? '');
  return match ? Number(match[1]) * 1024 : null;
}

/** Whether this process may write `path` (a cgroup's file; a dataset file, which also lets mincore show its pages). */
export function canWrite(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

// One buffer for every KernelFile (reads are synchronous): grown when a file outgrows it.
let shared = Buffer.allocUnsafe(16 * 1024);

/**
 * A kernel file read again and again, kept open and read with one pread(2) at offset 0 (/proc regenerates it there); a
 * descriptor on /proc/PID/... fails once its process is reaped, even if the pid is reused.
 */
export class KernelFile {
  private fd: number | null = null;

  constructor(readonly path: string) {}

  /** The file's text now, or null when it cannot be read (the next read opens it again). */
  read(): string | null {
    try {
      this.fd ??= openSync(this.path, 'r');
      let bytes = readSync(this.fd, shared, 0, shared.length, 0);
      while (bytes === shared.length) {
        shared = Buffer.allocUnsafe(shared.length * 2);
        bytes = readSync(this.fd, shared, 0, shared.length, 0);
      }
      return shared.toString('utf8', 0, bytes);
    } catch {
      this.close();
      return null;
    }
  }

  /** Closes the descriptor; idempotent. */
  close(): void {
    if (this.fd === null) return;
    try {
      closeSync(this.fd);
    } catch {
      // already closed
    }
    this.fd = null;
  }
}
