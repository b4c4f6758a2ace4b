// Whom the job runs as: the profiler needs root, the job does not (as root it writes root-owned files into the user's
// folders and finds root's HOME). Under sudo it runs as SUDO_USER with all their groups (node's uid option would drop
// the supplementary ones); --as-user root keeps it root (docs/install.md).
import { ExitCode, UserError } from '../errors.js';
import { findCommand } from '../system/kernel/resolve-command.js';
import { lookupUser, type SystemUser } from '../system/kernel/users.js';
import { JOB_START_TEXT } from './run-text.js';

/** A user the job is started as, and the setpriv that starts it. */
export interface RunAs extends SystemUser {
  /** setpriv's path (util-linux): it sets the ids and groups and execs the job, which keeps its pid. */
  setpriv: string;
}

/** What decides whom the job runs as. */
export interface RunAsRequest {
  /** --as-user, as given, or undefined. */
  flag: string | undefined;
  /** The CLI's environment: SUDO_USER, and the PATH that finds setpriv. */
  env: NodeJS.ProcessEnv;
  /** The CLI's effective uid (default: this process's). */
  euid?: number;
  /** Looks a user up (lookupUser; a fake in tests). */
  lookup?: (spec: string) => SystemUser | null;
}

/** The user to start the job as, or null to start it as the CLI's own user. */
export function chooseRunAs(request: RunAsRequest): RunAs | null {
  const lookup = request.lookup ?? lookupUser;
  const euid = request.euid ?? process.geteuid?.() ?? -1;
  const sudoUser = request.env.SUDO_USER && request.env.SUDO_USER !== 'root' ? request.env.SUDO_USER : undefined;
  const spec = request.flag ?? (euid === 0 ? sudoUser : undefined);
  if (spec === undefined) return null;
  const flag = request.flag !== undefined ? JOB_START_TEXT.asUserFlag(spec) : JOB_START_TEXT.sudoUser(spec);
  const user = lookup(spec);
  if (user === null) throw new UserError(JOB_START_TEXT.noSuchUser(flag, spec), ExitCode.BadValue);
  if (user.uid === euid) return null;
  if (euid !== 0) {
    throw new UserError(JOB_START_TEXT.notRoot(spec), ExitCode.Environment);
  }
  const setpriv = findCommand('setpriv', request.env.PATH, '/');
  if (typeof setpriv !== 'string') {
    throw new UserError(JOB_START_TEXT.noSetpriv(flag, user.name), ExitCode.Environment);
  }
  return { ...user, setpriv };
}

/** The job's argv started as `user`: setpriv sets the ids and groups, then execs it (same pid and group). */
export function runAsArgv(user: RunAs, argv: string[]): string[] {
  const groups = user.groups.length > 0 ? [`--groups=${user.groups.join(',')}`] : ['--clear-groups'];
  return [user.setpriv, `--reuid=${user.uid}`, `--regid=${user.gid}`, ...groups, '--', ...argv];
}

/** What the job's environment says of its user: theirs, not root's (caches under ~, credentials, USER). */
export function runAsEnv(user: RunAs): Record<string, string> {
  return { HOME: user.home, USER: user.name, LOGNAME: user.name };
}

/** The note that says whom the job runs as, and how to keep it root. */
export function runAsNote(user: RunAs, flag: string | undefined): string {
  const who =
    flag === undefined ? `${user.name} (uid ${user.uid}), who ran sudo` : `${user.name} (uid ${user.uid}, --as-user)`;
  return `the job runs as ${who}; the profile and its folder are theirs; --as-user root keeps the job root`;
}
