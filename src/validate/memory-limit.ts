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

/**
 * Steps over which the job's memory growth is remembered (about 2 s at the
 * 250 ms poll). Longer, the growth of a job's start-up held the floor high
 * through the whole measured window of a fast run: a CI run kept 54.5 of
 * 64 MiB cached at a 31.9 MiB target, its window about 2 s long.
 */
const GROWTH_WINDOW_STEPS = 8;

/** How far the limit jumps when the job is paused at it (out of memory with the killer disabled). */
function oomReliefBytes(ownBytes: number): number {
  return 16 * 2 ** 20 + 0.1 * ownBytes;
}

/** The limit counts as binding when usage is within this of it. */
const BINDING_MARGIN_BYTES = 4 * 2 ** 20;

/** One residency reading: the dataset bytes in the page cache at an iteration count. */
export interface ResidencySample {
  iterations: number;
  residentBytes: number;
}

/** One control step, kept so a cap that did not hold can be explained afterwards. */
export interface CapStep {
  residentBytes: number;
  ownBytes: number;
  usageBytes: number;
  floorBytes: number;
  limitBytes: number | null;
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
  /**
   * The job is paused at the limit: nothing left to reclaim, and the group's
   * OOM killer disabled, so it waits for the limit to rise instead of dying.
   */
  underOom: boolean;
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
  readonly steps: CapStep[] = [];
  private limitBytes: number | null = null;
  /** The job's own memory at the last step, and its growths over the recent steps: the floor keeps room for them. */
  private lastOwnBytes: number | null = null;
  private readonly recentGrowths: number[] = [];
  private busy = false;
  private lastScanMs = 0;
  private lastScanAt = 0;

  constructor(
    private readonly group: MemoryGroup,
    private readonly files: readonly FileRef[],
    readonly targetBytes: number,
    /** Room kept above the floor, for a job known to jump by more than the floor foresees (a retried point). */
    private readonly extraSlackBytes = 0,
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
    // The floor leaves room for the job's largest recent growth between two
    // polls, so the job seldom has to wait at the limit (it cannot be killed
    // there: cgroupMemory). It follows the job's current memory, not its peak:
    // room a shrinking heap frees would otherwise go to the dataset.
    if (this.lastOwnBytes !== null) this.recentGrowths.push(Math.max(0, ownBytes - this.lastOwnBytes));
    if (this.recentGrowths.length > GROWTH_WINDOW_STEPS) this.recentGrowths.shift();
    this.lastOwnBytes = ownBytes;
    const floor = ownBytes + MIN_SLACK_BYTES + this.extraSlackBytes + Math.max(0, ...this.recentGrowths);
    let next: number;
    if (this.limitBytes === null) {
      next = ownBytes + this.targetBytes + headroomBytes(ownBytes);
    } else if (memory.underOom) {
      // Growth faster than the floor foresaw: the job waits at the limit; let it go on.
      next = Math.max(this.limitBytes, memory.usageBytes) + oomReliefBytes(ownBytes);
    } else {
      const error = this.targetBytes - residentBytes;
      const binding = memory.usageBytes >= memory.limitBytes - BINDING_MARGIN_BYTES;
      next = error < 0 || binding ? this.limitBytes + error : this.limitBytes;
    }
    next = Math.round(Math.max(floor, next));
    this.steps.push({ residentBytes, ownBytes, usageBytes: memory.usageBytes, floorBytes: floor, limitBytes: next });
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

/**
 * The memory controller of a job's cgroup (v1 or v2), among its controller
 * folders, set so the cap can never kill the job: v1 disables the group's OOM
 * killer (a job at the limit with nothing to reclaim waits until the cap raises
 * it); v2 caps with memory.high, which reclaims and throttles but never kills.
 */
export function cgroupMemory(groupDirs: string[]): MemoryGroup {
  const v1 = groupDirs.find((dir) => existsSync(join(dir, 'memory.limit_in_bytes')));
  const v2 = groupDirs.find((dir) => existsSync(join(dir, 'memory.high')));
  const dir = v1 ?? v2;
  if (!dir) throw new Error('the job cgroup has no memory controller');
  const file = (v1name: string, v2name: string) => join(dir, v1 ? v1name : v2name);
  if (v1) writeFileSync(join(dir, 'memory.oom_control'), '1');
  return {
    read() {
      const stat = readFileSync(join(dir, 'memory.stat'), 'utf8');
      const field = (v1name: string, v2name: string): number =>
        v1 ? (statField(stat, `total_${v1name}`) ?? statField(stat, v1name) ?? 0) : (statField(stat, v2name) ?? 0);
      const limit = readFileSync(file('memory.limit_in_bytes', 'memory.high'), 'utf8').trim();
      return {
        usageBytes: Number(readFileSync(file('memory.usage_in_bytes', 'memory.current'), 'utf8')),
        cacheBytes: field('cache', 'file'),
        pinnedCacheBytes: field('mapped_file', 'file_mapped') + field('shmem', 'shmem'),
        limitBytes: limit === 'max' ? Number.MAX_SAFE_INTEGER : Number(limit),
        underOom: v1 ? statField(readFileSync(join(dir, 'memory.oom_control'), 'utf8'), 'under_oom') === 1 : false,
      };
    },
    setLimit(bytes) {
      writeFileSync(file('memory.limit_in_bytes', 'memory.high'), String(bytes));
    },
  };
}

function statField(stat: string, name: string): number | null {
  const match = new RegExp(`^${name} (\\d+)$`, 'm').exec(stat);
  return match ? Number(match[1]) : null;
}
