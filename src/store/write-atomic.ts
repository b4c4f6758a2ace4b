import { renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';

/**
 * Writes a file whole or not at all: a temp file in the same folder (removed if its write fails), renamed over
 * `path`. `write` fills the temp file: tests pass one that fails as a full disk does.
 */
export function writeAtomic<C extends string | Buffer>(
  path: string,
  content: C,
  write: (file: string, content: C) => void = (file, data) => writeFileSync(file, data),
): void {
  const temp = join(dirname(path), `.${basename(path)}.${process.pid}.tmp`);
  try {
    write(temp, content);
  } catch (error) {
    removeQuietly(temp);
    throw error;
  }
  renameSync(temp, path);
}

function removeQuietly(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Never written, or already gone.
  }
}
