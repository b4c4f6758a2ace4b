import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { residency, type FileRef } from '../system/page-cache.js';

/**
 * Slack above the job's own memory for the first limit, so a burst of its
 * allocations before the controller has seen the job does not meet the OOM
 * killer (with 4 MiB + 1%, a Node.js job's heap growth did, here).
 */
export function headroomBytes(nonCacheBytes: number): number {
  return 8 * 2 ** 20 + 0.1 * nonCacheBytes;
}

/** Never set the limit closer than this to the job's own memory, beyond its largest growth between two polls. */
const MIN_SLACK_BYTES = 8 * 2 ** 20;

/** Steps over which the job's memory growth is remembered (about 10 s at the 250 ms poll). */
const GROWTH_WINDOW_STEPS = 40;

/** The limit counts as binding when usage is within this of it. */
const BINDING_MARGIN_BYTES = 4 * 2 ** 20;

/** One residency reading: the dataset bytes in the page cache at an iteration count. */
export interface ResidencySample {
  iterations: number;
  residentBytes: number;
}

/** What a memory group reports: total usage and the part that is page cache. */
export interface GroupMemory {
  usageBytes: number;
  /** Page cache, shared memory included (as the kernel counts it). */
  cacheBytes: number;
  /**
   * The part of the cache the job cannot do without: files it has mapped (its
   * own executable and libraries) and shared memory, which without swap is
   * never reclaimed. A limit that squeezes these thrashes or OOM-kills the job.
   */
  pinnedCacheBytes: number;
  limitBytes: number;
}

/** Reading and setting a memory group's limit; a seam so the controller is testable without cgroups. */
export interface MemoryGroup {
  read(): GroupMemory;
  setLimit(bytes: number): void;
}

/**
 * Holds the dataset's share of a job's page cache at a target size.
 *
 * A memory cgroup limits everything the job charges: its own memory, the page
 * cache of the dataset, and other file pages (libraries, shared memory of
 * DataLoader workers). A limit of "own memory + target + a guessed headroom"
 * let a PyTorch job keep its whole dataset cached at a 75% target here. So
 * the controller measures what it controls: at every poll it reads the
 * dataset's residency (mincore) and moves the limit by the difference from the
 * target, and it keeps every reading so the caller can predict at the cache
 * the job really had. It raises the limit only while the limit is binding
 * (usage near it), so the first epoch, when the cache is simply not full yet,
 * does not wind the limit up.
 */
export class DatasetCacheCap {
  readonly samples: ResidencySample[] = [];
  private limitBytes: number | null = null;
  /** Largest own memory seen, and its growths over the recent steps: the floor keeps room for both. */
  private peakOwnBytes = 0;
  private lastOwnBytes: number | null = null;
  private readonly recentGrowths: number[] = [];
  private busy = false;
  private lastScanMs = 0;
  private lastScanAt = 0;

  constructor(
    private readonly group: MemoryGroup,
    private readonly files: readonly FileRef[],
    readonly targetBytes: number,
  ) {}

  /** One control step, at the job's current iteration count. Overlapping calls are skipped. */
  async adjust(iterations: number): Promise<void> {
    // A scan of a large dataset takes long: keep scanning to at most a quarter of the time.
    if (this.busy || Date.now() - this.lastScanAt < 3 * this.lastScanMs) return;
    this.busy = true;
    try {
      const started = Date.now();
      const resident = (await residency(this.files)).residentBytes;
      this.lastScanMs = Date.now() - started;
      this.lastScanAt = Date.now();
      this.samples.push({ iterations, residentBytes: resident });
      this.step(resident);
    } finally {
      this.busy = false;
    }
  }

  /** Moves the limit by target - resident, within what keeps the job alive. */
  step(residentBytes: number): void {
    const memory = this.group.read();
    const ownBytes = Math.max(0, memory.usageBytes - memory.cacheBytes) + memory.pinnedCacheBytes;
    // A Node.js job's heap grew by more than 8 MiB between two polls and met the
    // OOM killer at a floor of its current memory + 8 MiB: keep room for its
    // peak and for twice the largest recent growth. Recent only: a job grows
    // fastest while it starts, and a floor sized by that would never let the
    // limit bind once it has settled.
    if (this.lastOwnBytes !== null) this.recentGrowths.push(Math.max(0, ownBytes - this.lastOwnBytes));
    if (this.recentGrowths.length > GROWTH_WINDOW_STEPS) this.recentGrowths.shift();
    this.lastOwnBytes = ownBytes;
    this.peakOwnBytes = Math.max(this.peakOwnBytes, ownBytes);
    const floor = this.peakOwnBytes + MIN_SLACK_BYTES + 2 * Math.max(0, ...this.recentGrowths);
    let next: number;
    if (this.limitBytes === null) {
      next = ownBytes + this.targetBytes + headroomBytes(ownBytes);
    } else {
      const error = this.targetBytes - residentBytes;
      const binding = memory.usageBytes >= memory.limitBytes - BINDING_MARGIN_BYTES;
      next = error < 0 || binding ? this.limitBytes + error : this.limitBytes;
    }
    next = Math.round(Math.max(floor, next));
    if (next === this.limitBytes) return;
    try {
      this.group.setLimit(next);
      this.limitBytes = next;
    } catch {
      // A v1 limit below usage that the kernel cannot reclaim to is refused (EBUSY): try again next poll.
    }
  }

  /** Residency readings from the given iteration on (the steady window). */
  residencyFrom(iterations: number): number[] {
    return this.samples.filter((s) => s.iterations >= iterations).map((s) => s.residentBytes);
  }
}

/** The memory controller of a job's cgroup (v1 or v2), among its controller folders. */
export function cgroupMemory(groupDirs: string[]): MemoryGroup {
  const v1 = groupDirs.find((dir) => existsSync(join(dir, 'memory.limit_in_bytes')));
  const v2 = groupDirs.find((dir) => existsSync(join(dir, 'memory.max')));
  const dir = v1 ?? v2;
  if (!dir) throw new Error('the job cgroup has no memory controller');
  const file = (v1name: string, v2name: string) => join(dir, v1 ? v1name : v2name);
  return {
    read() {
      const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
      const field = (v1name: string, v2name: string): number =>
        v1 ? (statField(stat, `total_${v1name}`) ?? statField(stat, v1name) ?? 0) : (statField(stat, v2name) ?? 0);
      const limit = readFileSync(file('memory.limit_in_bytes', 'memory.max'), 'utf8').trim();
      return {
        usageBytes: Number(readFileSync(file('memory.usage_in_bytes', 'memory.current'), 'utf8')),
        cacheBytes: field('cache', 'file'),
        pinnedCacheBytes: field('mapped_file', 'file_mapped') + field('shmem', 'shmem'),
        limitBytes: limit === 'max' ? Number.MAX_SAFE_INTEGER : Number(limit),
      };
    },
    setLimit(bytes) {
      writeFileSync(file('memory.limit_in_bytes', 'memory.max'), String(bytes));
    },
  };
}

function statField(stat: string, name: string): number | null {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(stat);
  return match ? Number(match[1]) : null;
}
