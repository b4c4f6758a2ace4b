// A seeded random subset of a dataset's files, for a cached mode on a dataset that does not fit: a permutation's
// prefix, so every file is equally likely whatever its size (a greedy fill favours small files).
import fs from 'node:fs';
import path from 'node:path';
import { mulberry32, shuffledIndices } from '../../random.js';
import { FileTableBuilder, fileView, tableOf } from './file-table.js';
import { fileBytesQuantiles, type Dataset, type DatasetFile } from './dataset.js';

/** Fisher-Yates permutation of 0..n-1 from a seeded mulberry32 stream (4 bytes a file). */
export function seededOrder(n: number, seed: number): Uint32Array {
  return shuffledIndices(new Uint32Array(n), mulberry32(seed));
}

/** The end of the prefix of `order` from `start` that fits in `targetBytes` beside `usedBytes` (never skipping). */
export function prefixEnd(
  order: Uint32Array,
  sizes: ArrayLike<number>,
  start: number,
  usedBytes: number,
  targetBytes: number,
): number {
  let bytes = usedBytes;
  let end = start;
  while (end < order.length && bytes + sizes[order[end]] <= targetBytes) bytes += sizes[order[end++]];
  return end;
}

/** The indices order[start, end) in ascending order (the table's path order). */
export function sortedIndices(order: Uint32Array, start: number, end: number): Uint32Array {
  return order.slice(start, end).sort();
}

/** Sizes of the files, from their table when they are a table view. */
export function sizesOf(files: readonly DatasetFile[]): ArrayLike<number> {
  return tableOf(files)?.sizes ?? Float64Array.from(files, (f) => f.bytes);
}

/** The files at `indices` (ascending): a compact table view when `files` is one, else a plain array. */
export function pickFiles(files: readonly DatasetFile[], indices: Uint32Array): DatasetFile[] {
  const table = tableOf(files);
  if (!table) return Array.from(indices, (i) => files[i]);
  const builder = new FileTableBuilder();
  let k = 0;
  for (let dir = 0; dir < table.prefixes.length && k < indices.length; dir++) {
    const end = table.dirStart[dir + 1];
    const chosen: { name: string; bytes: number; foreign: boolean }[] = [];
    for (; k < indices.length && indices[k] < end; k++) {
      const i = indices[k];
      chosen.push({ name: table.name(i), bytes: table.sizes[i], foreign: table.foreign[i] === 1 });
    }
    builder.addDirectory(table.prefixes[dir], chosen);
  }
  return fileView(builder.build()) as DatasetFile[];
}

/** The dataset restricted to `files`, a subset of its files: their sizes and quantiles; it fits by construction. */
export function subsetDataset(dataset: Dataset, files: DatasetFile[]): Dataset {
  const sizes = sizesOf(files);
  let bytes = 0;
  for (let i = 0; i < sizes.length; i++) bytes += sizes[i];
  return {
    ...dataset,
    files,
    bytes,
    meanFileBytes: files.length > 0 ? bytes / files.length : 0,
    fileBytesQuantiles: fileBytesQuantiles(sizes),
    fitsInMemory: true,
  };
}

/** Writes DSA_SUBSET_FILE (docs/protocol.md): absolute paths, one a line; a path holding a newline is left out. */
export function writeSubsetList(
  file: string,
  files: readonly DatasetFile[],
  cwd: string,
): { files: number; leftOut: number } {
  const fd = fs.openSync(file, 'w');
  let written = 0;
  let leftOut = 0;
  try {
    let chunk: string[] = [];
    const flush = (): void => {
      if (chunk.length > 0) fs.writeSync(fd, `${chunk.join('\n')}\n`);
      chunk = [];
    };
    for (const f of files) {
      if (f.path.includes('\n')) {
        leftOut++;
        continue;
      }
      chunk.push(path.resolve(cwd, f.path));
      written++;
      if (chunk.length >= 4096) flush();
    }
    flush();
  } finally {
    fs.closeSync(fd);
  }
  return { files: written, leftOut };
}
