// The dataset as an event-driven keeper (inotify-keeper.ts,
// fanotify-keeper.ts) sees it: the directories to watch, and each file by the
// path an event spells (<watched directory>/<name>) with its size.
import pathModule from 'node:path';
import { tableOf } from './file-table.js';
import type { FileRef } from './page-cache.js';

/**
 * The dataset as the keeper looks it up: by the path an event spells
 * (<watched directory>/<name>), with each file's size (-1 when unknown).
 * Over a compact file table (system/file-table.ts) it answers by binary
 * search and holds nothing per file: a Map of 1.28M paths is ~150 MB, and a
 * cold keeper per run of the cold mode held one.
 */
export interface DatasetIndex {
  /** Directories to watch, each once. */
  dirs: string[];
  count: number;
  /** Size of the dataset file at `path` (-1 when unknown), or undefined when `path` is not one. */
  size(path: string): number | undefined;
  pathAt(k: number): string;
  sizeAt(k: number): number;
}

export function datasetIndex(files: readonly FileRef[]): DatasetIndex {
  const table = tableOf(files);
  // Table paths are prefix + name, and a prefix is its directory and a '/': what an event spells.
  if (table && table.prefixes.every((prefix) => prefix.length > 1)) {
    return {
      dirs: table.prefixes.filter((_, d) => table.dirStart[d + 1] > table.dirStart[d]).map((prefix) => prefix.slice(0, -1)),
      count: table.length,
      size: (path) => {
        const k = table.indexOf(path);
        return k < 0 ? undefined : table.sizes[k];
      },
      pathAt: (k) => table.path(k),
      sizeAt: (k) => table.sizes[k],
    };
  }
  const sizes = new Map<string, number>();
  const dirs = new Set<string>();
  for (const file of files) {
    const dir = pathModule.dirname(file.path);
    const key = `${dir}/${pathModule.basename(file.path)}`;
    const bytes = (file as { bytes?: unknown }).bytes;
    sizes.set(key === file.path ? file.path : key, typeof bytes === 'number' ? bytes : -1);
    dirs.add(dir);
  }
  const paths = [...sizes.keys()];
  return {
    dirs: [...dirs],
    count: paths.length,
    size: (path) => sizes.get(path),
    pathAt: (k) => paths[k],
    sizeAt: (k) => sizes.get(paths[k]) ?? -1,
  };
}
