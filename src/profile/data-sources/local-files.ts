// Files under the --data folders on this machine: page-cache states (cache-states/), the job tree's read_bytes as the
// meter, an io cgroup on the dataset's block device as the throttle, proofs limited by the folders' file systems
// (system/dataset/file-systems.ts). Files on FUSE or NFS build on this source (fuse-files.ts, nfs-files.ts).
import { ExitCode, UserError } from '../../errors.js';
import type { Mode } from '../../schema/events.js';
import { detectCgroups, createJobCgroup, wrapCommand, type CgroupInfo } from '../../system/cgroups/cgroups.js';
import { listDataset, type Dataset, type DatasetFile } from '../../system/dataset/dataset.js';
import { fileSystemLimit, fileSystemWarnings, type RootFileSystem } from '../../system/dataset/file-systems.js';
import { OutsideReadsSampler, outsideReadsNote } from '../../system/probes/open-files.js';
import { pageCacheSupport } from '../../system/page-cache/page-cache.js';
import { TreeMembers, selfReadBytes } from '../../system/kernel/proc.js';
import type { CpuLedger } from '../../system/kernel/cpu-ledger.js';
import { probeReads } from '../../system/probes/read-probe.js';
import { CappedCacheState } from '../cache-states/capped-cache-state.js';
import { PageCacheState } from '../cache-states/page-cache-state.js';
import { PartialCacheState } from '../cache-states/partial-cache-state.js';
import { CACHE_STATE_SETTINGS } from '../run-defaults.js';
import type { CacheState } from '../cache-states/cache-state.js';
import type { ReadProber } from '../storage-probe.js';
import type { CacheCap, Capping } from './cache-cap.js';
import type { DataSource } from './data-source.js';
import type { FetchMeter, FetchReadings } from './fetch-meter.js';
import type { HeldShare } from './held-share.js';
import type { OneLaunch, OneLaunching } from './one-launch.js';
import type { ReadThrottle, Throttling } from './throttle.js';

/** Options of the local-file source. */
export interface LocalFilesOptions {
  /** Make the cold mode cold with the global drop_caches instead of per-file eviction (root only). */
  dropCaches: boolean;
  /** Charged with the source's CPU: its meter, its states' warming, eviction and keepers; absent: nothing is. */
  ledger?: CpuLedger;
  /** The roots' file systems, read once when the source was chosen (openDataSource); absent: list() reads them. */
  fileSystems?: readonly RootFileSystem[];
}

// Period of the open-file sampling (the tree's processes, then their fds): cheap at 2 s.
const OUTSIDE_SAMPLE_MS = 2000;

/** Messages of the local-file source (the fake source refuses a throttle with its words). */
export const MESSAGES = {
  noBlockDevice:
    '--storage-bw: the dataset is not on a block device that can be throttled (tmpfs, overlay or network file ' +
    'system); put it on a local disk or omit --storage-bw',
  subsetNeedsOwnLaunch:
    'the dataset does not fit in memory: the cached mode samples a resident subset, which the job takes when it starts',
  noMeminfo:
    'the memory available to the page cache could not be read (/proc/meminfo): the cached mode cannot be proven',
  doesNotFit: (dataset: Dataset, budgetBytes: number) =>
    `the dataset (${(dataset.bytes / 2 ** 30).toFixed(2)} GiB) does not fit in the memory budget ` +
    `of ${(budgetBytes / 2 ** 30).toFixed(2)} GiB ` +
    `(${dataset.memoryBudgetSource ?? 'MemAvailable'}): the cached mode runs on a resident random subset, which the job must sample from (DSA_SUBSET_FILE, docs/protocol.md)`,
  windowSource: 'read_bytes of the job tree over the measured window (/proc, sampled)',
  wholeRunSource: 'read_bytes of the whole job tree over the whole run (/proc/self/io after reaping)',
  noSelfIo: '/proc/self/io is not readable',
} as const;

/** The files under `roots`, read through this machine's page cache. */
export class LocalFilesSource implements DataSource, Throttling, Capping, HeldShare, OneLaunching {
  readonly modeState: CacheState;
  readonly readProber: ReadProber = probeReads;
  private detected: { parent: string | undefined; info: CgroupInfo } | null = null;

  /** An io/blkio cgroup on the dataset's block device, where the machine lets this process write one. */
  readonly throttle: ReadThrottle = {
    obstacle: (env) => {
      const io = this.cgroups(env).controllers.io;
      return io.writable ? null : io.reason;
    },
    start: async (dataset, bytesPerSec, name, env) => {
      if (!dataset.device) throw new UserError(MESSAGES.noBlockDevice, ExitCode.Environment);
      const cgroups = this.cgroups(env);
      const readBpsDevice = { device: dataset.device, bytesPerSec };
      const group = createJobCgroup({ name, readBpsDevice, v2Parent: env.DSA_CGROUP_PARENT, cgroups });
      return { wrap: (argv) => wrapCommand(group.procsFiles, argv), remove: () => group.remove() };
    },
  };

  /** The page cache held at a size by evicting what the job reads beyond it. */
  readonly cap: CacheCap = {
    obstacle: () => {
      const support = pageCacheSupport();
      return support.evict && support.residency ? null : (support.reason ?? 'page-cache control is not available');
    },
    state: (capBytes) => new CappedCacheState(capBytes, { ledger: this.options.ledger }),
  };

  /** The job restricts its loader to a resident subset once, at its start: only a launch of the cached mode can. */
  readonly oneLaunch: OneLaunch = {
    obstacle: (dataset, modes) =>
      !dataset.fitsInMemory && modes.includes('cached') ? MESSAGES.subsetNeedsOwnLaunch : null,
  };

  constructor(
    /** The --data folders (or files), absolute. */
    readonly roots: string[],
    readonly options: LocalFilesOptions,
  ) {
    this.modeState = new PageCacheState({
      dropCaches: options.dropCaches,
      ...CACHE_STATE_SETTINGS,
      ledger: options.ledger,
    });
  }

  async list(): Promise<Dataset> {
    const dataset = await listDataset(this.roots, { fileSystems: this.options.fileSystems });
    const { dropCaches } = this.options;
    return { ...dataset, source: { kind: 'files', fetchesFrom: 'storage', roots: [...this.roots], dropCaches } };
  }

  /** The machine's cgroups, detected once per parent: the obstacle check and the throttle read the same answer. */
  private cgroups(env: NodeJS.ProcessEnv): CgroupInfo {
    const parent = env.DSA_CGROUP_PARENT;
    if (!this.detected || this.detected.parent !== parent)
      this.detected = { parent, info: detectCgroups({ v2Parent: parent }) };
    return this.detected.info;
  }

  async close(): Promise<void> {
    // Nothing is held between runs: each state and meter ends with its run.
  }

  warnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    // tmpfs, network and FUSE file systems keep a cache mode from being proven: said before anything runs.
    return [...this.fitWarnings(dataset, modes), ...fileSystemWarnings(dataset.fileSystems)];
  }

  /** Why the cached mode runs on a subset, or cannot be proven: the dataset does not fit in memory. */
  fitWarnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    if (dataset.fitsInMemory || !modes.includes('cached')) return [];
    const budget = dataset.memoryBudgetBytes;
    return [budget === null ? MESSAGES.noMeminfo : MESSAGES.doesNotFit(dataset, budget)];
  }

  heldShareState(held: readonly DatasetFile[]): CacheState {
    return new PartialCacheState(held, { ...CACHE_STATE_SETTINGS, ledger: this.options.ledger });
  }

  startMeter(mode: Mode, dataset: Dataset, ownDirs: readonly string[]): FetchMeter {
    return startReadBytesMeter(mode, dataset.roots, ownDirs, this.options.ledger);
  }

  proofLimit(mode: Mode, dataset: Dataset): string | null {
    // A dataset on tmpfs or NFS cannot be proven cold; on FUSE its reads are not the job's read_bytes
    // (file-systems.ts).
    return fileSystemLimit(mode, dataset.fileSystems);
  }
}

/**
 * The read_bytes meter: the sampler's readings of the job tree, and this process's own read_bytes before and after
 * (Linux adds a reaped child's I/O to its parent). Files the tree opens outside --data are sampled and named
 * (system/probes/open-files.ts), as they would pass for the dataset's reads.
 */
function startReadBytesMeter(
  mode: Mode,
  roots: readonly string[],
  ownDirs: readonly string[],
  ledger: CpuLedger | undefined,
): FetchMeter {
  const before = selfReadBytes();
  const outside = new OutsideReadsSampler(roots, ownDirs);
  let timer: NodeJS.Timeout | null = null;
  let tree: TreeMembers | null = null;
  return {
    attach(pid) {
      if (mode === 'synthetic') return;
      // The tree's members kept from sample to sample: a sample reads the tree's processes, not the machine's. attach()
      // is called as the job is spawned: its first reading need not walk every process.
      const members = new TreeMembers(null);
      tree = members;
      members.setRoot(pid, { spawnedNow: true });
      const sample = (): void => outside.sample(members.read().map((stat) => stat.pid));
      timer = setInterval(ledger ? ledger.wrap('meter', sample) : sample, OUTSIDE_SAMPLE_MS);
      timer.unref();
    },
    finish(resources): FetchReadings {
      if (timer) clearInterval(timer);
      tree?.close();
      const after = selfReadBytes();
      return {
        // The job tree's read_bytes at each resource sample (the sampler reads it from /proc).
        series: resources.map((s) => ({ t: s.t, bytes: s.jobReadBytes })),
        seriesSource: MESSAGES.windowSource,
        wholeRunBytes: before !== null && after !== null ? Math.max(0, after - before) : null,
        wholeRunSource: before !== null && after !== null ? MESSAGES.wholeRunSource : MESSAGES.noSelfIo,
        // The bound on a cold mode's proof counts only the outside files still open in the window its reads are from (a
        // checkpoint loaded at start-up is not). Files seen open only while the training loader was idle between epochs
        // (a validation set) are not named.
        otherReads: (sinceMs, aside = [], untilMs = Infinity) => {
          const note = outsideReadsNote(outside.result(-Infinity, aside, untilMs));
          if (note === null) return null;
          return { bytes: outside.result(sinceMs, aside, untilMs).dirs.reduce((total, d) => total + d.bytes, 0), note };
        },
      };
    },
  };
}
