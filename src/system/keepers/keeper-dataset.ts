// The dataset as an event-driven keeper sees it: a compact file table whose directories are the ones to watch (a Map of
// 1.28M paths would be ~150 MB).
import pathModule from 'node:path';
import { FileTableBuilder, tableOf, type FileTable } from '../dataset/file-table.js';
import type { FileRef } from '../page-cache/page-cache.js';

/** The table behind `files` (a walk's list is one), or one built from a plain list (sizes unknown: -1). */
export function keeperTable(files: readonly FileRef[]): FileTable {
  const table = tableOf(files);
  if (table) return table;
  const byDir = new Map<string, { name: string; bytes: number; foreign: boolean }[]>();
  for (const file of files) {
    const dir = pathModule.dirname(file.path);
    const bytes = (file as { bytes?: unknown }).bytes;
    const list = byDir.get(dir) ?? [];
    list.push({ name: pathModule.basename(file.path), bytes: typeof bytes === 'number' ? bytes : -1, foreign: false });
    byDir.set(dir, list);
  }
  const builder = new FileTableBuilder();
  for (const [dir, list] of byDir) builder.addDirectory(dir.endsWith('/') ? dir : `${dir}/`, list);
  return builder.build();
}

/** Each directory of the table that holds files, as a path to watch, with its index in the table. */
export function watchedDirs(table: FileTable): { dir: number; path: string }[] {
  const out: { dir: number; path: string }[] = [];
  for (let dir = 0; dir < table.prefixes.length; dir++) {
    if (table.dirStart[dir + 1] === table.dirStart[dir]) continue;
    const prefix = table.prefixes[dir];
    out.push({ dir, path: prefix === '' ? '.' : prefix.length > 1 ? prefix.slice(0, -1) : prefix });
  }
  return out;
}
