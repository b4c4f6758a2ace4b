// A deterministic data source for tests: its dataset is made up (no file is
// listed or read), its states are FakeCacheStates, its meter reads the run's
// resource samples and nothing else, and its throttle only records what it
// was asked. A whole profile or validate runs on it with a fake mode runner
// and touches neither the dataset, the page cache, /proc nor a cgroup.
import { ExitCode, UserError } from '../../src/errors.js';
import type { Mode } from '../../src/schema/events.js';
import type { Dataset, DatasetFile } from '../../src/system/dataset/dataset.js';
import type { ResidencyReading } from '../../src/system/keepers/inotify-keeper.js';
import type { ReadProber } from '../../src/profile/storage-probe.js';
import { FakeCacheState, type FakeCacheStateOptions } from './fake-cache-state.js';
import { fetchedSeriesOf } from '../../src/profile/window-rates.js';
import type { CacheCap, CappedState, Capping } from '../../src/profile/data-sources/cache-cap.js';
import type { DataSource, FetchOrigin } from '../../src/profile/data-sources/data-source.js';
import type { FetchMeter } from '../../src/profile/data-sources/fetch-meter.js';
import type { OneLaunch } from '../../src/profile/data-sources/one-launch.js';
import type { ReadThrottle, Throttling } from '../../src/profile/data-sources/throttle.js';
import { MESSAGES as LOCAL_FILES_MESSAGES } from '../../src/profile/data-sources/local-files.js';

/** What a FakeDataSource is and answers. */
export interface FakeDataSourceOptions {
  /** Files of the made-up dataset (default 1000). */
  files?: number;
  /** Bytes of each file (default 100 kB). */
  fileBytes?: number;
  /** The block device it claims to sit on ('major:minor'), or null for none (default '254:0'). */
  device?: string | null;
  /** Whether it fits in memory (default true). */
  fitsInMemory?: boolean;
  /** Where uncached bytes come from (default 'storage'). */
  fetchesFrom?: FetchOrigin;
  /** The modes' states: how resident the dataset is before each mode (FakeCacheState). */
  states?: FakeCacheStateOptions;
  /** Why each mode cannot be proven here whatever the readings (default none). */
  proofLimits?: Partial<Record<Mode, string>>;
  /** Why capping, or throttling, is impossible on this machine (default: both possible). */
  cappingObstacle?: string;
  throttleObstacle?: string;
  /** Share of a capped state's target its residency readings report (default 1: the cap held). */
  cappedShare?: number;
  /** Answers of the storage probe's reads (default: all 64 MiB from storage in half a second). */
  readProber?: ReadProber;
  /**
   * Whether its meter is a counter of the data's bytes alone (a proxy, a FUSE daemon's sockets), not read_bytes
   * (default false).
   */
  ownCounter?: boolean;
}

/** A cache capped at a size, as FakeDataSource hands it out. */
export class FakeCappedState extends FakeCacheState implements CappedState {
  private running = false;
  /** Residency readings taken, in order. */
  readonly readings: ResidencyReading[] = [];

  constructor(
    /** The target. */
    readonly capBytes: number,
    private readonly share: number,
  ) {
    super();
  }

  override async prepare(mode: Mode, dataset: Dataset) {
    const prepared = await super.prepare(mode, dataset);
    this.running = true;
    return {
      ...prepared,
      finish: async () => {
        this.running = false;
        return prepared.finish();
      },
    };
  }

  get capping(): boolean {
    return this.running;
  }

  readResidency(): ResidencyReading | null {
    if (!this.running) return null;
    const residentBytes = Math.round(this.capBytes * this.share);
    const reading = { residentBytes, heldBytes: residentBytes, measuredFiles: 0, exact: true };
    this.readings.push(reading);
    return reading;
  }
}

/** The deterministic data source; records what it was asked. */
export class FakeDataSource implements DataSource, Throttling, Capping {
  readonly modeState: FakeCacheState;
  readonly readProber: ReadProber;
  /** Each capped state handed out (validate's cache points), in order. */
  readonly cappedStates: FakeCappedState[] = [];
  /** Each throttle set up, in order: its name and rate, and whether it was removed since. */
  readonly throttles: { name: string; bytesPerSec: number; removed: boolean }[] = [];
  /** Each meter started: its mode and whether it was attached to a job and finished. */
  readonly meters: { mode: Mode; attached: boolean; finished: boolean }[] = [];
  /** How many times list() ran, and whether close() ran. */
  listed = 0;
  closed = false;

  readonly throttle: ReadThrottle = {
    obstacle: () => this.options.throttleObstacle ?? null,
    start: async (dataset, bytesPerSec, name) => {
      // As local files refuse a dataset off a block device.
      if (!dataset.device) throw new UserError(LOCAL_FILES_MESSAGES.noBlockDevice, ExitCode.Environment);
      const record = { name, bytesPerSec, removed: false };
      this.throttles.push(record);
      const remove = async () => {
        record.removed = true;
      };
      return { wrap: (argv) => ['throttled', ...argv], remove };
    },
  };

  readonly cap: CacheCap = {
    obstacle: () => this.options.cappingObstacle ?? null,
    state: (capBytes) => {
      const state = new FakeCappedState(capBytes, this.options.cappedShare ?? 1);
      this.cappedStates.push(state);
      return state;
    },
  };

  /** A counter of its own is read for a whole launch (as a FUSE daemon's is): then no one launch. */
  readonly oneLaunch?: OneLaunch;
  readonly whyNot?: { oneLaunch: string };

  constructor(private readonly options: FakeDataSourceOptions = {}) {
    this.modeState = new FakeCacheState(options.states);
    const bytes = 64 << 20;
    const probe: ReadProber = async (_files, { concurrency, requestBytes }) => {
      const sec = 0.5;
      const files = 16;
      return { bytesRead: bytes, storageBytes: bytes, files, sec, bytesPerSec: bytes / sec, concurrency, requestBytes };
    };
    this.readProber = options.readProber ?? probe;
    if (options.ownCounter) this.whyNot = { oneLaunch: 'a fake source with its own counter counts a whole launch' };
    else this.oneLaunch = { obstacle: () => null };
  }

  async list(): Promise<Dataset> {
    this.listed++;
    const count = this.options.files ?? 1000;
    const fileBytes = this.options.fileBytes ?? 100_000;
    const files: DatasetFile[] = Array.from({ length: count }, (_, k) => ({
      path: `/fake/data/${k}.bin`,
      bytes: fileBytes,
    }));
    return {
      roots: ['/fake/data'],
      files,
      bytes: count * fileBytes,
      meanFileBytes: fileBytes,
      fileBytesQuantiles: { p10: fileBytes, p50: fileBytes, p90: fileBytes, max: fileBytes },
      device: this.options.device === undefined ? '254:0' : this.options.device,
      fitsInMemory: this.options.fitsInMemory ?? true,
      memoryBudgetBytes: 2 ** 40,
      skippedEntries: 0,
      source: {
        kind: 'files',
        fetchesFrom: this.options.fetchesFrom ?? 'storage',
        roots: ['/fake/data'],
        dropCaches: false,
      },
    };
  }

  async close(): Promise<void> {
    this.closed = true;
  }

  warnings(dataset: Dataset, modes: readonly Mode[]): string[] {
    return !dataset.fitsInMemory && modes.includes('cached') ? ['the fake dataset does not fit in memory'] : [];
  }

  heldShareState(): FakeCacheState {
    return new FakeCacheState(this.options.states);
  }

  startMeter(mode: Mode): FetchMeter {
    const record = { mode, attached: false, finished: false };
    this.meters.push(record);
    return {
      attach: () => {
        record.attached = true;
      },
      finish: (resources) => {
        record.finished = true;
        const series = fetchedSeriesOf(resources);
        return {
          series,
          seriesSource: 'the fake meter over the measured window',
          wholeRunBytes: series.length > 0 ? series[series.length - 1].bytes - series[0].bytes : null,
          wholeRunSource: 'the fake meter over the whole run',
          otherReads: () => null,
          ...(this.options.ownCounter ? { ownCounter: true } : {}),
        };
      },
    };
  }

  proofLimit(mode: Mode): string | null {
    return this.options.proofLimits?.[mode] ?? null;
  }
}
