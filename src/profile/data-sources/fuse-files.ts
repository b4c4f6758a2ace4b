// Files on a FUSE mount (s3fs, rclone, mount-s3, gcsfuse): read by the mount's daemon, so the job's read_bytes never
// move. Chosen once, as the source is opened: where the daemon can be metered (fuse-meter.ts), its count proves both
// cache modes; where it cannot, the data is read as local files and the proofs say why. The page cache in front of
// the mount is local files' (the kernel keeps a FUSE file's pages where the daemon lets it: s3fs -o kernel_cache).
import type { Mode } from '../../schema/events.js';
import type { DataSourceRecord } from '../../schema/profile.js';
import type { Dataset, DatasetFile } from '../../system/dataset/dataset.js';
import type { RootFileSystem } from '../../system/dataset/file-systems.js';
import { SocketCounter } from '../../system/network/socket-counter.js';
import { probeReads } from '../../system/probes/read-probe.js';
import type { CacheState } from '../cache-states/cache-state.js';
import type { ReadProber } from '../storage-probe.js';
import type { CacheCap, Capping } from './cache-cap.js';
import type { DataSource } from './data-source.js';
import type { FetchMeter } from './fetch-meter.js';
import { fuseMount, startSocketMeter, type FuseMount, type MountRecord } from './fuse-meter.js';
import type { HeldShare } from './held-share.js';
import { LocalFilesSource, type LocalFilesOptions } from './local-files.js';
import type { OneLaunch, OneLaunching } from './one-launch.js';
import type { ReadThrottle, Throttling } from './throttle.js';

const MESSAGES = {
  needsOwnLaunch: "a FUSE mount's reads are counted on its daemon's sockets for a whole launch",
  unmetered: (obstacle: string) => `its daemon cannot be metered: ${obstacle}`,
  metered: (record: MountRecord) =>
    `--data is on ${record.type} (${record.source} at ${record.mountPoint}), read by its ` +
    `daemon ${record.daemon.program} (pid ${record.daemon.pid}): ` +
    `the modes are proven by the bytes the daemon's sockets receive, counted in the kernel${record.daemon.otherProcesses > 0 ? `; its cgroup ${record.daemon.cgroup} holds ${record.daemon.otherProcesses} other processes, whose traffic counts as the mount's` : ''}. ` +
    "The cached mode holds only where the daemon lets the kernel keep a file's pages between opens (s3fs -o " +
    'kernel_cache) or keeps its own copy (rclone --vfs-cache-mode full, which the cold mode cannot empty)',
  unlisted: 'the FUSE mount is metered before its data was listed (a bug: please report it)',
} as const;

/** The source of files under `roots` on FUSE: the metered mount where its daemon can be metered, else local files. */
export function openFuseFiles(roots: string[], options: LocalFilesOptions): DataSource {
  const mount = fuseMount(options.fileSystems ?? []);
  return 'group' in mount
    ? new MeteredFuseSource(new LocalFilesSource(roots, options), mount)
    : new UnmeteredFuseSource(roots, options, mount.obstacle);
}

/** The profile's record of files on FUSE, with the mount where its daemon was metered. */
function fuseRecord(files: LocalFilesSource, mount: MountRecord | null): DataSourceRecord {
  const { roots, options } = files;
  const fetchesFrom = mount ? 'network' : 'storage';
  return { kind: 'fuse', fetchesFrom, roots: [...roots], dropCaches: options.dropCaches, mount };
}

/**
 * A FUSE mount whose daemon is metered: its sockets' bytes are the meter and the storage probe's cold bytes. Its page
 * cache, throttle, cap and held share are the local files' it holds.
 */
export class MeteredFuseSource implements DataSource, Throttling, Capping, HeldShare, OneLaunching {
  readonly modeState: CacheState;
  readonly throttle: ReadThrottle;
  readonly cap: CacheCap;
  /** The daemon's counter, held from the listing until close. */
  private counter: SocketCounter | null = null;

  readonly oneLaunch: OneLaunch = {
    // A daemon's traffic is counted for the whole launch, not a block's window.
    obstacle: (dataset, modes) => this.files.oneLaunch.obstacle(dataset, modes) ?? MESSAGES.needsOwnLaunch,
  };

  /** The storage probe: its cold bytes are the daemon's network bytes, not read_bytes (0). */
  readonly readProber: ReadProber = async (files, limits) => {
    const before = await this.listed().read();
    const result = await probeReads(files, limits);
    const after = await this.listed().read();
    return { ...result, storageBytes: after.payloadBytes - before.payloadBytes };
  };

  constructor(
    private readonly files: LocalFilesSource,
    private readonly mount: FuseMount,
  ) {
    ({ modeState: this.modeState, throttle: this.throttle, cap: this.cap } = files);
  }

  async list(): Promise<Dataset> {
    const dataset = await this.files.list();
    this.counter ??= await SocketCounter.start([this.mount.group]);
    const { record } = this.mount;
    return { ...dataset, mount: record, source: fuseRecord(this.files, record) };
  }

  async close(): Promise<void> {
    // The daemon's counter is held between runs: released once they have all ended.
    const counter = this.counter;
    this.counter = null;
    await counter?.close();
  }

  warnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    return [...this.files.fitWarnings(dataset, modes), MESSAGES.metered(this.mount.record)];
  }

  heldShareState(held: readonly DatasetFile[]): CacheState {
    return this.files.heldShareState(held);
  }

  startMeter(): FetchMeter {
    return startSocketMeter(this.listed(), this.mount.record, this.files.options.ledger);
  }

  /** The daemon's network bytes prove both cache modes. */
  proofLimit(): string | null {
    return null;
  }

  private listed(): SocketCounter {
    if (!this.counter) throw new Error(MESSAGES.unlisted);
    return this.counter;
  }
}

/** Files on a FUSE mount whose daemon cannot be metered: local files (read_bytes), the reason said in the proofs. */
export class UnmeteredFuseSource extends LocalFilesSource {
  constructor(
    roots: string[],
    options: LocalFilesOptions,
    private readonly obstacle: string,
  ) {
    super(roots, options);
  }

  override async list(): Promise<Dataset> {
    return { ...(await super.list()), source: fuseRecord(this, null) };
  }

  override warnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    return [...super.warnings(dataset, modes), MESSAGES.unmetered(this.obstacle)];
  }

  override proofLimit(mode: Mode, dataset: Dataset): string | null {
    const limit = super.proofLimit(mode, dataset);
    return limit && `${limit}, and ${MESSAGES.unmetered(this.obstacle)}`;
  }
}

/** Whether any root is on a FUSE mount: one such root makes the data FUSE's (a mix is refused by its metering). */
export function isOnFuse(fileSystems: readonly RootFileSystem[]): boolean {
  return fileSystems.some((f) => f.kind === 'fuse');
}
