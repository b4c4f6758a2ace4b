// Which python3 a profiled job gets: execvp's PATH lookup in the job's environment. Under sudo that is secure_path, and
// an activated venv is lost (issue 32): doctor names the fix.
import { dirname } from 'node:path';
import type { z } from 'zod';
import type { JobPythonSchema } from '../../schema/doctor-output.js';
import { findCommand } from '../kernel/resolve-command.js';
import { sudoPathText, venvMismatchText } from './job-python-text.js';

/** The Python a job will run, as doctor reports it. */
export type JobPython = z.infer<typeof JobPythonSchema>;

/** The folders sudo's default secure_path holds (Debian, Ubuntu, RHEL): a python3 found there is the system's. */
const SYSTEM_DIRS = new Set([
  '/usr/local/sbin',
  '/usr/local/bin',
  '/usr/sbin',
  '/usr/bin',
  '/sbin',
  '/bin',
  '/snap/bin',
]);

/** Looks python3 (or `python`, from --python) up as the job will; `uid` is the CLI's effective uid. */
export function jobPython(env: NodeJS.ProcessEnv, cwd: string, uid: number, python?: string): JobPython {
  const command = python ?? 'python3';
  const searchPath = env.PATH ?? '';
  const found = findCommand(command, searchPath, cwd);
  const path = typeof found === 'string' ? found : null;
  const sudoUser = uid === 0 && env.SUDO_USER && env.SUDO_USER !== 'root' ? env.SUDO_USER : null;
  const virtualEnv = env.VIRTUAL_ENV || env.CONDA_PREFIX || null;
  return {
    command,
    path,
    searchPath,
    sudoUser,
    virtualEnv,
    warning: warningOf(path, sudoUser, virtualEnv, python !== undefined),
  };
}

function warningOf(
  path: string | null,
  sudoUser: string | null,
  virtualEnv: string | null,
  named: boolean,
): string | null {
  // An interpreter named with --python is what the user meant.
  if (named) return null;
  if (virtualEnv !== null && (path === null || !path.startsWith(`${virtualEnv}/`)))
    return venvMismatchText(virtualEnv, path);
  if (sudoUser !== null && virtualEnv === null && (path === null || SYSTEM_DIRS.has(dirname(path))))
    return sudoPathText(sudoUser, path);
  return null;
}
