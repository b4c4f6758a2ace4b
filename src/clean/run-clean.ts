// `ds-analyzer clean`: what runs left behind, one item per thing, each saying what was done or would be. Machine
// state always: killed runs' cgroups (one still holding processes kept unless `force`), and a DAMON reclaim pause whose
// run and guardian died. The user's files only when asked (`cache`, `artifacts`), else listed with their sizes. Nothing
// whose owner's pid still runs is touched.
import { emptyAndRemove, findLeftoverCgroups, type CgroupFs } from '../system/cgroups/leftovers.js';
import { readRecordedPause, restoreRecordedPause } from '../system/cgroups/damon.js';
import {
  ARTEFACT_FOLDER,
  DEMO_DATASET,
  VALIDATE_FOLDER,
  foldersIn,
  remoteCopiesIn,
  removeFolder,
  type LeftoverFolder,
} from '../store/leftover-files.js';
import { ARTEFACT_WORDS, CLEAN_TEXT } from './clean-text.js';

/** What clean looks at, and what it may do. */
export interface CleanInput {
  /** Where job cgroups are made (cgroupRoots of the detected setup). */
  cgroupRoots: string[];
  /** Cgroups and processes (realCgroupFs; a fake in tests). */
  cgroupFs: CgroupFs;
  /** The record of a DAMON reclaim pause (paths.ts reclaimPauseFile). */
  reclaimPauseFile: string;
  /** The tool's cache folder, holding the demo's datasets. */
  cacheDir: string;
  /** Folder of the profiles, whose <name>.d folders are artefacts. */
  profilesDir: string;
  /** Folder of validate's work folders. */
  reportsDir: string;
  /** Say what would be done, change nothing. */
  dryRun: boolean;
  /** Kill the processes of a killed run still inside a left cgroup, then remove it. */
  force: boolean;
  /** Remove the demo's datasets. */
  cache: boolean;
  /** Remove the profiles' artefact folders and validate's work folders. */
  artifacts: boolean;
}

/** One thing clean found. */
export interface CleanItem {
  /** What it is. */
  kind: 'cgroup' | 'reclaim' | 'cache' | 'artefacts' | 'page-cache';
  /** done: removed or restored; would: so in a dry run; kept: in use or not asked; failed: could not; none found. */
  outcome: 'done' | 'would' | 'kept' | 'failed' | 'none';
  /** The folder or file it is about; null for a summary line. */
  path: string | null;
  /** Its size, for folders. */
  bytes?: number;
  /** The line shown. */
  text: string;
}

/** What clean did. */
export interface CleanResult {
  /** One item per thing, in the order done. */
  items: CleanItem[];
  /** True when something could not be removed or restored. */
  failed: boolean;
  /** True for a dry run. */
  dryRun: boolean;
}

/** Cleans up after ds-analyzer as `input` allows; never throws for a single item that fails (it is reported). */
export async function runClean(input: CleanInput): Promise<CleanResult> {
  const items = [
    ...(await cleanCgroups(input)),
    cleanReclaim(input),
    ...cleanFolders(input),
    itemOf('page-cache', null)('none', CLEAN_TEXT.pageCache),
  ];
  return { items, failed: items.some((i) => i.outcome === 'failed'), dryRun: input.dryRun };
}

/** An item maker for one thing of `kind` at `path` (null: a summary line). */
function itemOf(kind: CleanItem['kind'], path: string | null, bytes?: number) {
  return (outcome: CleanItem['outcome'], text: string): CleanItem => ({
    kind,
    outcome,
    path,
    ...(bytes !== undefined ? { bytes } : {}),
    text,
  });
}

async function cleanCgroups(input: CleanInput): Promise<CleanItem[]> {
  const { cgroupFs: fs, dryRun } = input;
  const left = findLeftoverCgroups(input.cgroupRoots, fs);
  if (left.length === 0) return [itemOf('cgroup', null)('none', CLEAN_TEXT.noCgroups(input.cgroupRoots))];
  const items: CleanItem[] = [];
  for (const group of left) {
    const item = itemOf('cgroup', group.dir);
    if (group.inUse) {
      items.push(item('kept', CLEAN_TEXT.cgroupInUse(group.dir, group.ownerPid!, group.ownerCommand)));
      continue;
    }
    const pids = group.pids.map((pid) => ({ pid, command: fs.command(pid) }));
    if (pids.length > 0 && !input.force) {
      items.push(item('kept', CLEAN_TEXT.cgroupHolds(group.dir, pids)));
      continue;
    }
    const said = (dry: boolean) =>
      pids.length > 0 ? CLEAN_TEXT.cgroupKilled(group.dir, pids, dry) : CLEAN_TEXT.cgroupRemoved(group.dir, dry);
    if (dryRun) {
      items.push(item('would', said(true)));
      continue;
    }
    const { error } = await emptyAndRemove(group.dir, fs);
    items.push(error !== null ? item('failed', CLEAN_TEXT.cgroupFailed(group.dir, error)) : item('done', said(false)));
  }
  return items;
}

function cleanReclaim(input: CleanInput): CleanItem {
  const file = input.reclaimPauseFile;
  const record = readRecordedPause(file);
  const item = itemOf('reclaim', file);
  if (record === null) return itemOf('reclaim', null)('none', CLEAN_TEXT.noReclaimPause);
  if (record === 'unreadable') return item('failed', CLEAN_TEXT.reclaimUnreadable(file));
  const owner = input.cgroupFs.command(record.pid);
  if (owner !== null) return item('kept', CLEAN_TEXT.reclaimInUse(record.pid, owner));
  const names = record.switches.map((s) => s.name);
  if (input.dryRun) return item('would', CLEAN_TEXT.reclaimRestored(names, record.pid, true));
  const { restored, failures } = restoreRecordedPause(file, record);
  return failures.length > 0
    ? item('failed', CLEAN_TEXT.reclaimFailed(failures, file))
    : item('done', CLEAN_TEXT.reclaimRestored(restored, record.pid, false));
}

function cleanFolders(input: CleanInput): CleanItem[] {
  const items: CleanItem[] = [];
  const each = (
    folders: LeftoverFolder[],
    kind: 'cache' | 'artefacts',
    remove: boolean,
    kept: (f: LeftoverFolder) => string,
    removed: (f: LeftoverFolder, dryRun: boolean) => string,
  ): void => {
    for (const f of folders) {
      const item = itemOf(kind, f.path, f.bytes);
      if (!remove) items.push(item('kept', kept(f)));
      else if (input.dryRun) items.push(item('would', removed(f, true)));
      else {
        const error = removeFolder(f.path);
        items.push(
          error === null ? item('done', removed(f, false)) : item('failed', CLEAN_TEXT.removeFailed(f.path, error)),
        );
      }
    }
  };
  const demo = foldersIn(input.cacheDir, DEMO_DATASET);
  if (demo.length === 0) items.push(itemOf('cache', null)('none', CLEAN_TEXT.noDemo(input.cacheDir)));
  each(
    demo,
    'cache',
    input.cache,
    (f) => CLEAN_TEXT.demoKept(f.path, f.bytes),
    (f, dry) => CLEAN_TEXT.demoRemoved(f.path, f.bytes, dry),
  );
  const profiles = foldersIn(input.profilesDir, ARTEFACT_FOLDER);
  // A copy of remote data is a dataset, named as one and removed with the demo's (--cache), before its folder.
  each(
    remoteCopiesIn(profiles),
    'cache',
    input.cache,
    (f) => CLEAN_TEXT.copyKept(f.path, f.bytes),
    (f, dry) => CLEAN_TEXT.copyRemoved(f.path, f.bytes, dry),
  );
  const validate = foldersIn(input.reportsDir, VALIDATE_FOLDER);
  if (profiles.length + validate.length === 0)
    items.push(itemOf('artefacts', null)('none', CLEAN_TEXT.noArtefacts(input.profilesDir, input.reportsDir)));
  for (const [folders, what] of [
    [profiles, ARTEFACT_WORDS.profile],
    [validate, ARTEFACT_WORDS.validate],
  ] as const) {
    each(
      folders,
      'artefacts',
      input.artifacts,
      (f) => CLEAN_TEXT.artefactsKept(f.path, f.bytes, what),
      (f, dry) => CLEAN_TEXT.artefactsRemoved(f.path, f.bytes, what, dry),
    );
  }
  return items;
}
