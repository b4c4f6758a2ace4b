// The file system under each --data root, and what it lets the cache modes prove: a memory file system has no storage
// under its page cache, a network one's server keeps a cache no client can see, a FUSE one is read by its daemon, not
// the job.
import fs from 'node:fs';
import path from 'node:path';
import type { z } from 'zod';
import type { DatasetFileSystemSchema } from '../../schema/doctor-output.js';
import { mountOf, parseMountinfo, type Mount } from '../kernel/mountinfo.js';

/** The file system holding one --data root, and what it lets the cache modes prove (see fileSystemKind). */
export type RootFileSystem = z.infer<typeof DatasetFileSystemSchema>;
export type FileSystemKind = RootFileSystem['kind'];

const MEMORY = new Set(['tmpfs', 'ramfs', 'devtmpfs', 'hugetlbfs']);
const OVERLAY = new Set(['overlay', 'overlayfs', 'aufs', 'unionfs']);
const NETWORK = new Set([
  'nfs',
  'nfs4',
  'cifs',
  'smb3',
  'smbfs',
  '9p',
  'ceph',
  'glusterfs',
  'lustre',
  'gpfs',
  'afs',
  'beegfs',
  'davfs',
  'orangefs',
  'ocfs2',
  'gfs2',
  'wekafs',
]);
const FUSE = new Set(['fuse', 'fuseblk', 'virtiofs', 'juicefs', 'alluxio']);
const DISK = new Set([
  'ext2',
  'ext3',
  'ext4',
  'xfs',
  'btrfs',
  'zfs',
  'f2fs',
  'jfs',
  'reiserfs',
  'bcachefs',
  'vfat',
  'exfat',
  'ntfs',
  'ntfs3',
]);

/** The kind of a mountinfo file-system type. */
export function fileSystemKind(type: string): FileSystemKind {
  if (MEMORY.has(type)) return 'memory';
  if (OVERLAY.has(type)) return 'overlay';
  if (FUSE.has(type) || type.startsWith('fuse.')) return 'fuse';
  if (NETWORK.has(type)) return 'network';
  if (DISK.has(type)) return 'disk';
  return 'other';
}

/** The file system of each root (resolved through symlinks); roots that cannot be resolved are left out. */
export async function rootFileSystems(
  roots: readonly string[],
  readMountinfo: () => Promise<string> = () => fs.promises.readFile('/proc/self/mountinfo', 'utf8'),
): Promise<RootFileSystem[]> {
  let text: string;
  try {
    text = await readMountinfo();
  } catch {
    return [];
  }
  return rootFileSystemsNow(roots, () => text);
}

/** rootFileSystems at once: what a command reads to choose the data source before anything is listed. */
export function rootFileSystemsNow(
  roots: readonly string[],
  readMountinfo: () => string = () => fs.readFileSync('/proc/self/mountinfo', 'utf8'),
): RootFileSystem[] {
  let mounts: Mount[];
  try {
    mounts = parseMountinfo(readMountinfo());
  } catch {
    return [];
  }
  return roots.flatMap((root) => {
    let resolved: string;
    try {
      resolved = fs.realpathSync(path.resolve(root));
    } catch {
      return [];
    }
    return fileSystemOf(root, resolved, mounts) ?? [];
  });
}

/** The file system holding `resolved` (the root `root`, through its symlinks), or null where no mount holds it. */
function fileSystemOf(root: string, resolved: string, mounts: readonly Mount[]): RootFileSystem | null {
  const mount = mountOf(mounts, resolved);
  if (!mount) return null;
  const { mountPoint, type, source } = mount;
  return { root, mountPoint, type, source, kind: fileSystemKind(type) };
}

// Messages shown to users, in one table (size-limit's MESSAGES pattern).
const MESSAGES = {
  memory: (fsys: RootFileSystem) =>
    `--data ${fsys.root} is on ${fsys.type} (mounted at ${fsys.mountPoint}): its page cache is its storage, so ` +
    `nothing can be evicted and there is no cold mode to measure; copy the dataset to a disk to profile fetching`,
  network: (fsys: RootFileSystem) =>
    `--data ${fsys.root} is on ${fsys.type} (${fsys.source} at ${fsys.mountPoint}): the server's own cache ` +
    `cannot be evicted from here, so the cold mode may read from the server's memory rather than its storage; ` +
    `copy the dataset to a local disk to profile the storage itself`,
  fuse: (fsys: RootFileSystem) =>
    `--data ${fsys.root} is on ${fsys.type} (${fsys.source} at ${fsys.mountPoint}): a FUSE daemon does the ` +
    `reads, so they are not the job's read_bytes and its caches cannot be evicted from here; the cached and ` +
    `cold modes cannot be proven`,
  overlay: (fsys: RootFileSystem) =>
    `--data ${fsys.root} is on ${fsys.type} (mounted at ${fsys.mountPoint}): eviction and residency go through ` +
    `to the layer below, but no block device is known, so disk throughput is not sampled; mount the dataset as ` +
    `a volume to get it`,
  coldOnMemory: (fsys: RootFileSystem) =>
    `the dataset is on ${fsys.type} at ${fsys.mountPoint}: its pages cannot be evicted, so a cold mode does not ` +
    `exist there`,
  serverCache: (fsys: RootFileSystem) =>
    `the dataset is on ${fsys.type} (${fsys.source}): the server's cache cannot be evicted from here, so a read ` +
    `counted as the job's may have come from the server's memory, not its storage`,
  unattributed: (fsys: RootFileSystem) =>
    `the dataset is on ${fsys.type} (${fsys.source}): a FUSE daemon does the reads, so they are not counted in ` +
    `the job's read_bytes and the storage-read proof cannot be made`,
} as const;

/** The profile's warnings about the dataset's file systems, one per root that limits a mode. */
export function fileSystemWarnings(fileSystems: readonly RootFileSystem[] | undefined): string[] {
  return (fileSystems ?? []).flatMap((f) => (f.kind === 'disk' || f.kind === 'other' ? [] : [MESSAGES[f.kind](f)]));
}

/** Why a mode's cache state cannot be proven on these file systems, or null. */
export function fileSystemLimit(mode: string, fileSystems: readonly RootFileSystem[] | undefined): string | null {
  for (const fsys of fileSystems ?? []) {
    if (mode === 'cold' && fsys.kind === 'memory') return MESSAGES.coldOnMemory(fsys);
    if (mode === 'cold' && fsys.kind === 'network') return MESSAGES.serverCache(fsys);
    if ((mode === 'cold' || mode === 'cached') && fsys.kind === 'fuse') return MESSAGES.unattributed(fsys);
  }
  return null;
}
