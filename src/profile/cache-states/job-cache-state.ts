// A job's own cache of the data (WebDataset's cache_dir, Streaming's `local`, LITDATA_CACHE_DIR: --job-cache) is a
// cache the cold mode must empty too: a client that finds a sample there reads it from disk, not from where the source
// meters it. Any source's states can be wrapped in this one, which empties the folder before the cold mode and keeps it
// empty while it runs (system/keepers/folder-sweeper.ts); the other modes leave it as it is.
import type { Mode } from '../../schema/events.js';
import type { Dataset } from '../../system/dataset/dataset.js';
import { startSweeper, sweepFolder } from '../../system/keepers/folder-sweeper.js';
import type { CacheState, PrepareHint, PreparedState } from './cache-state.js';

// How often the job's own cache folder is swept in the cold mode.
const SWEEP_MS = 250;

/** `state` with the job's cache folder `dir` emptied and kept empty in the cold mode (swept files: re-evictions). */
export function withJobCache(state: CacheState, dir: string): CacheState {
  return {
    async prepare(mode: Mode, dataset: Dataset, hint?: PrepareHint): Promise<PreparedState> {
      const prepared = await state.prepare(mode, dataset, hint);
      if (mode !== 'cold') return prepared;
      sweepFolder(dir);
      const sweeper = startSweeper(dir, SWEEP_MS);
      return {
        ...prepared,
        finish: async () => {
          const finished = await prepared.finish();
          const swept = sweeper.stop().files;
          return { ...finished, reEvictions: (finished.reEvictions ?? 0) + swept };
        },
      };
    },
  };
}
