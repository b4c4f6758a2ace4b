// The regular files under a folder of the tool's own, links not followed: what clean sizes, --redact rewrites and a
// full disk cuts.
import { type Dirent, readdirSync } from 'node:fs';
import { join } from 'node:path';

/** Paths of the regular files under `dir` at any depth; a folder that cannot be read (or `dir` missing) adds none. */
export function filesUnder(dir: string): string[] {
  const files: string[] = [];
  const stack = [dir];
  while (stack.length > 0) {
    const here = stack.pop()!;
    let entries: Dirent[];
    try {
      entries = readdirSync(here, { withFileTypes: true });
    } catch {
      continue;
    }
    for (const e of entries) {
      const path = join(here, e.name);
      if (e.isDirectory()) stack.push(path);
      else if (e.isFile()) files.push(path);
    }
  }
  return files;
}
