// Files the tool wrote as root for a job run as another user (profile --as-user) are given to that user: their
// profiles, reports and the job's own folders are theirs to write, read and delete, as if they had run it without sudo.
import { lchownSync, lstatSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { KERNEL_TEXT } from './kernel-text.js';

/** The owner to give files to. */
export interface Owner {
  uid: number;
  gid: number;
}

/** Gives each path (`recursive`: its whole tree) to `owner`; links changed, never followed; gone paths skipped. */
export function handOver(paths: readonly string[], owner: Owner, options: { recursive: boolean }): void {
  for (const path of paths) give(path, owner, options.recursive);
}

function give(path: string, owner: Owner, recursive: boolean): void {
  let isDir: boolean;
  try {
    isDir = lstatSync(path).isDirectory();
    lchownSync(path, owner.uid, owner.gid);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    // NFS with root_squash, for one, refuses root's chown.
    throw new UserError(KERNEL_TEXT.cannotGive(path, owner.uid, code ?? 'error'), ExitCode.Environment);
  }
  if (recursive && isDir) for (const entry of readdirSync(path)) give(join(path, entry), owner, true);
}
