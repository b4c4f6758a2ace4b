// The one place a data source is chosen and built, for profile, validate and the demo: folders or remote objects, and
// the file systems under the folders choose among the file sources (FUSE, NFS, local). A new source is a class here and
// an entry in FILE_SOURCES or DataSpec (docs/architecture.md, "A data source").
import type { DataSourceRecord } from '../../schema/profile.js';
import { rootFileSystemsNow, type RootFileSystem } from '../../system/dataset/file-systems.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';
import { parseRemoteSpec, type RemoteSpec } from '../../system/network/remote-spec.js';
import type { DataSource, OpenedSource } from './data-source.js';
import { isOnFuse, openFuseFiles } from './fuse-files.js';
import { LocalFilesSource, type LocalFilesOptions } from './local-files.js';
import { isOnNfs, NfsFilesSource } from './nfs-files.js';
import { RemoteObjectsSource, type RemoteOptions } from './remote-objects.js';

/** What a command was given as the job's data. */
export type DataSpec =
  | {
      kind: 'files';
      /** The --data folders (or files), absolute. */
      roots: string[];
      /** Make the cold mode cold with the global drop_caches (root only). */
      dropCaches: boolean;
    }
  | ({
      kind: 'remote';
      /** The objects, parsed from --remote and --endpoint (credentials kept for fetching only). */
      remote: RemoteSpec;
    } & Omit<RemoteOptions, 'env' | 'ledger' | 'say'>);

/** What a source may need of the command that opens it. */
export interface SourceDeps {
  /** The CLI's environment (a remote source derives the job's proxy variables from it). */
  env: NodeJS.ProcessEnv;
  /** Charged with a file source's CPU (its meter, warming, eviction, keepers); absent: nothing is charged. */
  ledger?: CpuLedger;
  /** Reads /proc/self/mountinfo (replaceable in tests). */
  readMountinfo?: () => string;
  /** Says a line on the terminal before a long step of the source (remote data's copy for the cached mode). */
  say?: (line: string) => void;
}

/** The sources of files read another way than from a local disk: the first whose test holds reads them. */
const FILE_SOURCES: readonly {
  holds: (fileSystems: readonly RootFileSystem[]) => boolean;
  open: (roots: string[], options: LocalFilesOptions) => DataSource;
}[] = [
  { holds: isOnFuse, open: openFuseFiles },
  { holds: isOnNfs, open: (roots, options) => new NfsFilesSource(roots, options) },
];

/** The source that reads `spec`'s data; nothing is listed, started or measured until its list(). */
export function openDataSource(spec: DataSpec, deps: SourceDeps): OpenedSource {
  if (spec.kind === 'remote') {
    const { kind, remote, ...options } = spec;
    // Not charged to the ledger: profilerCpu has never counted the remote meters' readings (a change of its own).
    return new RemoteObjectsSource(remote, { ...options, env: deps.env, say: deps.say });
  }
  // Read once: the file systems that choose the source are the ones its listing records.
  const fileSystems = rootFileSystemsNow(spec.roots, deps.readMountinfo);
  const options: LocalFilesOptions = {
    dropCaches: spec.dropCaches,
    fileSystems,
    ...(deps.ledger ? { ledger: deps.ledger } : {}),
  };
  const chosen = FILE_SOURCES.find((source) => source.holds(fileSystems));
  return chosen ? chosen.open(spec.roots, options) : new LocalFilesSource(spec.roots, options);
}

/**
 * The spec that opens a profile's data again (validate), credentials from `env` as the job's come, its cache under
 * `cacheDir`; the cold mode without drop_caches, whatever the profile did.
 */
export function dataSpecOf(record: DataSourceRecord, env: NodeJS.ProcessEnv, cacheDir: string): DataSpec {
  if (record.kind !== 'remote') return { kind: 'files', roots: record.roots, dropCaches: false };
  const { url, endpoint, jobCache, netMeter } = record;
  const remote = parseRemoteSpec(url, endpoint ?? undefined, env);
  return { kind: 'remote', remote, named: { url, endpoint }, jobCache, netMeter, cacheDir, proxyPort: 0 };
}
