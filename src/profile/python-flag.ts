// profile --python: the job's interpreter, named once. Under sudo the user's PATH is gone (secure_path); its folder
// first on the job's PATH makes `python`, `torchrun` and `accelerate` resolve to that environment (docs/install.md).
import { existsSync } from 'node:fs';
import { delimiter, dirname, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { KERNEL_TEXT } from '../system/kernel/kernel-text.js';
import { findCommand } from '../system/kernel/resolve-command.js';
import { JOB_START_TEXT } from './run-text.js';

/** The environment with `python`'s active: its folder first on PATH, VIRTUAL_ENV or CONDA_PREFIX set. */
export function withPython(python: string, env: NodeJS.ProcessEnv, cwd: string): NodeJS.ProcessEnv {
  const path = python.includes('/') ? resolve(cwd, python) : python;
  const found = findCommand(path, env.PATH, cwd);
  if (typeof found !== 'string') {
    const why = found.sawNonExecutable ? KERNEL_TEXT.notExecutable : KERNEL_TEXT.notFound;
    throw new UserError(JOB_START_TEXT.pythonNotRunnable(python, why), ExitCode.CommandNotFound);
  }
  // The folder as named, not the link's target: a venv's bin/python links to the system's.
  const bin = dirname(found);
  const prefix = dirname(bin);
  const rest = (env.PATH ?? '').split(delimiter).filter((dir) => dir !== '' && dir !== bin);
  return {
    ...env,
    PATH: [bin, ...rest].join(delimiter),
    ...(existsSync(`${prefix}/pyvenv.cfg`) ? { VIRTUAL_ENV: prefix } : {}),
    ...(existsSync(`${prefix}/conda-meta`) ? { CONDA_PREFIX: prefix } : {}),
  };
}
