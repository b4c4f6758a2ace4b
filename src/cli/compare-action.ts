import { resolve } from 'node:path';
import { ExitCode } from '../errors.js';
import { compareProfiles } from '../compare/diff.js';
import { readProfile } from '../store/profile-store.js';
import { renderComparison } from '../report/compare-text.js';
import { compareOutput } from '../schema/compare-output.js';
import type { Io } from './io.js';

/** What `compare` does once commander has parsed its arguments: both profiles side by side, printed. */
export function compareAction(pathA: string, pathB: string, raw: { json?: boolean }, io: Io): ExitCode {
  const a = readProfile(resolve(io.cwd, pathA));
  const b = readProfile(resolve(io.cwd, pathB));
  const comparison = compareProfiles(a, b);
  io.stdout(
    raw.json ? JSON.stringify(compareOutput(comparison), null, 1) + '\n' : renderComparison(comparison, pathA, pathB),
  );
  return ExitCode.Ok;
}
