// Who a user is, as the system's name service says (getent, so LDAP and SSSD users count as well as /etc/passwd's):
// what a job started as them needs.
import { execFileSync } from 'node:child_process';

/** A user of this machine. */
export interface SystemUser {
  /** Login name. */
  name: string;
  uid: number;
  /** Primary group id. */
  gid: number;
  /** Every group id the user is in (primary and supplementary), as `id -G` lists them. */
  groups: number[];
  /** Home folder. */
  home: string;
}

/** The user a name or numeric uid names, or null when the name service knows none. */
export function lookupUser(spec: string): SystemUser | null {
  const entry = run('getent', ['passwd', spec]);
  if (entry === null) return null;
  const [name, , uid, gid, , home] = entry.trim().split('\n')[0].split(':');
  if (name === undefined || home === undefined || !/^\d+$/.test(uid) || !/^\d+$/.test(gid)) return null;
  const groups = (run('id', ['-G', name]) ?? gid)
    .trim()
    .split(/\s+/)
    .filter((g) => /^\d+$/.test(g))
    .map(Number);
  return { name, uid: Number(uid), gid: Number(gid), groups: groups.length > 0 ? groups : [Number(gid)], home };
}

function run(file: string, args: string[]): string | null {
  try {
    return execFileSync(file, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'], timeout: 10_000 });
  } catch {
    return null;
  }
}
