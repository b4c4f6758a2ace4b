import { existsSync } from 'node:fs';
import { delimiter } from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Python side shipped in the npm package (python/: ds_analyzer and its sitecustomize hook). */
export const PYTHON_PACKAGE_DIR = fileURLToPath(new URL('../../../python', import.meta.url));

/** PYTHONPATH for the job: our folder first, so its sitecustomize runs (and chains the one it shadows). */
export function pythonHookEnv(baseEnv: NodeJS.ProcessEnv, dir: string = PYTHON_PACKAGE_DIR): Record<string, string> {
  if (!existsSync(dir)) return {};
  const existing = (baseEnv.PYTHONPATH ?? '').split(delimiter).filter((p) => p !== '' && p !== dir);
  return { PYTHONPATH: [dir, ...existing].join(delimiter) };
}
