// Files on a FUSE mount (s3fs, rclone, mount-s3, gcsfuse): read by the mount's daemon, so the job's read_bytes never
// move. Where the daemon can be metered (fuse-meter.ts), its count proves both cache modes; where it cannot, the data
// is read as local files and the proofs say why. The page cache in front of the mount is handled as local files' (the
// kernel keeps a FUSE file's pages where the daemon lets it: s3fs -o kernel_cache).
import type { Mode } from '../../schema/events.js';
import type { Dataset } from '../../system/dataset/dataset.js';
import type { RootFileSystem } from '../../system/dataset/file-systems.js';
import { probeReads } from '../../system/probes/read-probe.js';
import type { ReadProber } from '../storage-probe.js';
import type { FetchMeter, FetchOrigin, OneLaunch } from './data-source.js';
import { meterFuseMount, meteredWarning, startSocketMeter, type FuseMetering } from './fuse-meter.js';
import { LocalFilesSource } from './local-files.js';

const MESSAGES = {
  needsOwnLaunch: "a FUSE mount's reads are counted on its daemon's sockets for a whole launch",
  unmetered: (obstacle: string) => `its daemon cannot be metered: ${obstacle}`,
} as const;

/** Files under `roots`, some or all of them on a FUSE mount. */
export class FuseFilesSource extends LocalFilesSource {
  /** The daemon, metered once the data is listed; or why it cannot be; null before the listing. */
  private fuse: FuseMetering | { obstacle: string } | null = null;

  /** The storage probe; on a metered mount its cold bytes are the daemon's network bytes, not read_bytes (0). */
  override readonly readProber: ReadProber = async (files, limits) => {
    const metering = this.metering();
    if (!metering) return probeReads(files, limits);
    const before = await metering.counter.read();
    const result = await probeReads(files, limits);
    const after = await metering.counter.read();
    return { ...result, storageBytes: after.payloadBytes - before.payloadBytes };
  };

  override readonly oneLaunch: OneLaunch = {
    // A daemon's traffic is counted for the whole launch, not a block's window.
    obstacle: (dataset, modes) =>
      this.subsetObstacle(dataset, modes) ?? (this.metering() ? MESSAGES.needsOwnLaunch : null),
  };

  /** Files on a metered mount come over the daemon's network. */
  override get fetchesFrom(): FetchOrigin {
    return this.metering() ? 'network' : 'storage';
  }

  override async list(): Promise<Dataset> {
    const dataset = await super.list();
    await this.close();
    this.fuse = await meterFuseMount(dataset.fileSystems);
    const mount = this.metering()?.record;
    const { roots, options } = this;
    const source = { kind: 'fuse' as const, roots: [...roots], dropCaches: options.dropCaches, mount: mount ?? null };
    return { ...dataset, ...(mount ? { mount } : {}), source };
  }

  private metering(): FuseMetering | null {
    return this.fuse && 'counter' in this.fuse ? this.fuse : null;
  }

  private obstacle(): string | null {
    return this.fuse && 'obstacle' in this.fuse ? this.fuse.obstacle : null;
  }

  override async close(): Promise<void> {
    // The daemon's counter is held between runs: released once they have all ended.
    const metering = this.metering();
    this.fuse = null;
    if (metering) await metering.counter.close();
  }

  override warnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    const metering = this.metering();
    if (metering) return [...this.fitWarnings(dataset, modes), meteredWarning(metering.record)];
    const obstacle = this.obstacle();
    return [...super.warnings(dataset, modes), ...(obstacle ? [MESSAGES.unmetered(obstacle)] : [])];
  }

  override startMeter(mode: Mode, dataset: Dataset, ownDirs: readonly string[]): FetchMeter {
    const metering = this.metering();
    return metering ? startSocketMeter(metering, this.options.ledger) : super.startMeter(mode, dataset, ownDirs);
  }

  override proofLimit(mode: Mode, dataset: Dataset): string | null {
    // The daemon's network bytes prove both cache modes.
    if (this.metering()) return null;
    const limit = super.proofLimit(mode, dataset);
    const obstacle = this.obstacle();
    return limit && obstacle ? `${limit}, and ${MESSAGES.unmetered(obstacle)}` : limit;
  }
}

/** Whether any root is on a FUSE mount: one such root makes the data FUSE's (a mix is refused by its metering). */
export function isOnFuse(fileSystems: readonly RootFileSystem[]): boolean {
  return fileSystems.some((f) => f.kind === 'fuse');
}
