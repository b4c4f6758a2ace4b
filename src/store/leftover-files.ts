// The files ds-analyzer leaves on disk on purpose, found and sized for `ds-analyzer clean`: profiles' artefact folders,
// validate's work folders, the demo's datasets, and a copy of remote data a killed profile left.
import { lstatSync, readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { filesUnder } from './files-under.js';

/** A folder found, with its size. */
export interface LeftoverFolder {
  /** The folder. */
  path: string;
  /** Bytes of the files under it (links not followed). */
  bytes: number;
}

/** Bytes of the regular files under `path`, links not followed; 0 where it cannot be read. */
export function folderBytes(path: string): number {
  let total = 0;
  for (const file of filesUnder(path)) {
    try {
      total += lstatSync(file).size;
    } catch {
      // Gone between the listing and the stat.
    }
  }
  return total;
}

/** The folders in `dir` whose names `match`, sorted, each with its size; none where `dir` does not exist. */
export function foldersIn(dir: string, match: RegExp): LeftoverFolder[] {
  let names: string[];
  try {
    names = readdirSync(dir, { withFileTypes: true })
      .filter((e) => e.isDirectory() && match.test(e.name))
      .map((e) => e.name)
      .sort();
  } catch {
    return [];
  }
  return names.map((name) => ({ path: join(dir, name), bytes: folderBytes(join(dir, name)) }));
}

/** A profile's artefact folders: <profile>.d beside each profile file. */
export const ARTEFACT_FOLDER = /\.d$/;
/** validate's work folders: validate-<ms since the epoch>. */
export const VALIDATE_FOLDER = /^validate-\d+$/;
/** The demo's generated datasets: demo-<files>x<bytes>. */
export const DEMO_DATASET = /^demo-\d+x\d+$/;

/** A profile's copy of remote objects, under its artefacts: left only by a profile that was killed. */
export const REMOTE_COPY_FOLDER = 'remote-cache';

/** The copies of remote data left in these artefact folders, each with its size. */
export function remoteCopiesIn(artefacts: readonly LeftoverFolder[]): LeftoverFolder[] {
  return artefacts.flatMap((f) => foldersIn(f.path, new RegExp(`^${REMOTE_COPY_FOLDER}$`)));
}

/** Removes a folder and everything under it; the errno code when it cannot, else null. */
export function removeFolder(path: string): string | null {
  try {
    rmSync(path, { recursive: true, force: true });
    return null;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code ?? String(error);
  }
}
