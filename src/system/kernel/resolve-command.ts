import { accessSync, constants, statSync } from 'node:fs';
import { delimiter, isAbsolute, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../../errors.js';
import { KERNEL_TEXT } from './kernel-text.js';

/** Checks before any mode runs that the job's command can run, as execvp looks for it: one line, nothing measured. */
export function assertCommandExists(file: string, pathVariable: string | undefined, cwd: string): void {
  const found = findCommand(file, pathVariable, cwd);
  if (typeof found === 'string') return;
  const reason = found.sawNonExecutable ? KERNEL_TEXT.notExecutableFix : KERNEL_TEXT.notFound;
  throw new UserError(KERNEL_TEXT.commandNotRunnable(file, reason), ExitCode.CommandNotFound);
}

/** The file execvp runs for `file` under `pathVariable`, or why there is none. */
export function findCommand(
  file: string,
  pathVariable: string | undefined,
  cwd: string,
): string | { sawNonExecutable: boolean } {
  const candidates = file.includes('/')
    ? [isAbsolute(file) ? file : resolve(cwd, file)]
    : (pathVariable ?? '')
        .split(delimiter)
        .filter(Boolean)
        .map((dir) => join(dir, file));
  let sawNonExecutable = false;
  for (const candidate of candidates) {
    try {
      if (!statSync(candidate).isFile()) continue;
    } catch {
      continue;
    }
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      sawNonExecutable = true;
    }
  }
  return { sawNonExecutable };
}
