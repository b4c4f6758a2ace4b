// Files on an NFS mount: read through this machine's page cache and counted in the job's read_bytes, so all is as for
// local files but where an uncached byte comes from: the server, over the network. Its own cache is not ours to evict,
// so a cold read may hit the server's memory: the cold proof says so (fileSystemLimit).
import type { Dataset } from '../../system/dataset/dataset.js';
import type { RootFileSystem } from '../../system/dataset/file-systems.js';
import { withoutCredentials } from './fuse-meter.js';
import { LocalFilesSource } from './local-files.js';

/** The file-system types of an NFS mount, as /proc/self/mountinfo names them. */
const NFS_TYPES: ReadonlySet<string> = new Set(['nfs', 'nfs4']);

/** Files under `roots`, all on NFS. */
export class NfsFilesSource extends LocalFilesSource {
  override async list(): Promise<Dataset> {
    const dataset = await super.list();
    // One NFS mount under every root: isOnNfs chose this source for no other (without one, the files' record).
    const mount = dataset.fileSystems?.find((f) => NFS_TYPES.has(f.type));
    const { roots, options } = this;
    if (!mount) return dataset;
    const { type, source: server, mountPoint } = mount;
    // A mount's source holds no keys for NFS, but no profile field may ever carry a user:password@ part.
    const where = { type, server: withoutCredentials(server), mountPoint };
    // Uncached bytes come from the NFS server, over the network.
    const { dropCaches } = options;
    return { ...dataset, source: { kind: 'nfs', fetchesFrom: 'network', roots: [...roots], dropCaches, ...where } };
  }
}

/**
 * Whether every root is on one NFS mount: the source records one server and mount point. A mix with other file systems,
 * or roots on several mounts, is read as local files, each limit said.
 */
export function isOnNfs(fileSystems: readonly RootFileSystem[]): boolean {
  const mounts = new Set(fileSystems.map((f) => f.mountPoint));
  return mounts.size === 1 && fileSystems.every((f) => NFS_TYPES.has(f.type));
}
