/**
 * Where ds-analyzer keeps its own files outside the working folder, from the caller's environment (XDG Base Directory
 * Specification): the cache folder with the demo's datasets, and the record of a DAMON reclaim pause that
 * `ds-analyzer clean` restores if a run and its guardian both died
 * (docs/side-effects.md).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';

/** $XDG_CACHE_HOME/ds-analyzer, else ~/.cache/ds-analyzer. */
export function toolCacheDir(env: NodeJS.ProcessEnv): string {
  return join(env.XDG_CACHE_HOME || join(env.HOME || homedir(), '.cache'), 'ds-analyzer');
}

/** The record of a DAMON reclaim pause, written when one is paused and removed when it is restored. */
export function reclaimPauseFile(env: NodeJS.ProcessEnv): string {
  return join(toolCacheDir(env), 'damon-paused.json');
}
