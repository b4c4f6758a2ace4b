// What an event-driven keeper (fanotify-keeper.ts, inotify-keeper.ts) evicts,
// and when. Pure bookkeeping: the keepers read the events and make the calls;
// this says which files to act on.
//
// - A file the job closes is done with: a cold keeper evicts it whole. A cache
//   cap (capBytes > 0) enters it in an LRU by close time (CacheLru) and
//   evicts the least recently closed files while the LRU and the files being
//   read hold more than the cap; a cold keeper is the cap of 0.
// - A file being read and not closed (a large shard streamed through one
//   descriptor) is swept page by page (page-sweep.ts), or, under a cap,
//   measured and counted against it as the most recently used. It leaves the
//   sweeps once IDLE_SWEEPS sweeps in a row find it idle; under a cap it then
//   enters the LRU as if closed.
// - After lost events (a queue overflow) nothing known about the files being
//   read holds: they are forgotten, and every file but those the LRU holds is
//   evicted once (event-keeper.ts).

// Sweeps that find a file being read idle, in a row, before it leaves the sweeps.
export const IDLE_SWEEPS = 3;

/** What the policy keeps of a file being read; a keeper extends it with its own (a descriptor, a path). */
export interface FileBeingRead {
  /** Sweeps in a row that found the file idle. */
  idleSweeps: number;
}

/**
 * The eviction policy of one keeper; a file is whatever the keeper knows it by (an index in its table, a device and
 * inode).
 */
export class EvictionPolicy<File, State extends FileBeingRead = FileBeingRead> {
  /** Files being read and not closed since. */
  private readonly reading = new Map<File, State>();
  /**
   * Pages of swept files seen resident at the previous sweep (page-sweep.ts); kept until the file is evicted or no
   * longer read.
   */
  private readonly previous = new Map<File, Uint8Array>();
  /** Files closed and still cached, least recently closed first. */
  private readonly lru = new CacheLru<File>();
  /** Cap: resident bytes of the files being read, at the last measurement. */
  private readonly openResident = new Map<File, number>();

  /** `capBytes`: dataset bytes the page cache may hold; 0 keeps the dataset cold. */
  constructor(readonly capBytes: number) {}

  /** True under a cap: the files being read are measured, not swept, until they alone exceed it. */
  get caps(): boolean {
    return this.capBytes > 0;
  }

  /** Files being read. */
  get readingCount(): number {
    return this.reading.size;
  }

  /** The state of `file` while it is being read. */
  readingState(file: File): State | undefined {
    return this.reading.get(file);
  }

  /** `file` is read and was not known to be: it is in use, out of the LRU, until its next close. */
  startReading(file: File, state: State): void {
    this.reading.set(file, state);
    this.lru.remove(file);
  }

  /**
   * The job closed `file` (`bytes` of it cached): it is no longer read, and it
   * enters the LRU; evictions() answers whether it goes.
   */
  closed(file: File, bytes: number): void {
    this.reading.delete(file);
    this.openResident.delete(file);
    this.lru.closed(file, bytes);
  }

  /**
   * `file` is no longer read and its pages are gone (closed and evicted at once); returns its state when it was being
   * read.
   */
  stopReading(file: File): State | undefined {
    const state = this.reading.get(file);
    this.reading.delete(file);
    this.previous.delete(file);
    return state;
  }

  /**
   * Takes out of the LRU the files to evict now, least recently closed first:
   * while the LRU and the files being read hold more than the cap (every
   * closed file for a cold keeper). A file read again since its close has left
   * the LRU (startReading): evicting it would drop pages under the new reader.
   */
  evictions(): File[] {
    const out = this.lru.overBudget(this.capBytes - this.openBytes());
    for (const file of out) this.previous.delete(file);
    return out;
  }

  /** Whether an overflow sweep leaves `file` alone: the cap holds it. */
  keeps(file: File): boolean {
    return this.lru.has(file);
  }

  /**
   * Events were lost: what was believed about the files being read is void. Returns their states (to release what they
   * hold).
   */
  forgetReading(): State[] {
    const states = [...this.reading.values()];
    this.reading.clear();
    this.previous.clear();
    return states;
  }

  /** The pages of `file` seen resident at its previous sweep. */
  previousPages(file: File): Uint8Array | undefined {
    return this.previous.get(file);
  }

  /** What a sweep of `file` found newly resident, for its next sweep. */
  setPreviousPages(file: File, arrived: Uint8Array | undefined): void {
    if (arrived) this.previous.set(file, arrived);
    else this.previous.delete(file);
  }

  /**
   * One sweep of the files being read: `sweep(file, state)` does the keeper's
   * work on one and says whether it is still in use. A file idle IDLE_SWEEPS
   * sweeps in a row leaves the sweeps and is handed to `left` (a close that
   * merged into another, or a file open and idle: a later read brings it back).
   */
  sweepReading(
    sweep: (file: File, state: State) => boolean,
    left: (file: File, state: State) => void = () => {},
  ): void {
    for (const file of this.previous.keys()) if (!this.reading.has(file)) this.previous.delete(file);
    for (const [file, state] of this.reading) {
      if (sweep(file, state)) state.idleSweeps = 0;
      else if (++state.idleSweeps >= IDLE_SWEEPS) {
        this.reading.delete(file);
        this.previous.delete(file);
        left(file, state);
      }
    }
  }

  /**
   * Cap: one measurement of the files being read, `residentBytes(file)` each
   * (null: unknown, the last value stands). A file whose bytes did not move is
   * idle; idle IDLE_SWEEPS times in a row, it enters the LRU as if closed, at
   * its resident bytes. Returns true when the files being read alone hold more
   * than the cap: their old pages must then be swept as a cold keeper does
   * (sweepReading, then measuredOverCap()).
   */
  measureReading(residentBytes: (file: File) => number | null): boolean {
    for (const [file, state] of this.reading) {
      const last = this.openResident.get(file);
      const bytes = residentBytes(file) ?? last ?? 0;
      this.openResident.set(file, bytes);
      if (bytes !== last) state.idleSweeps = 0;
      else if (++state.idleSweeps >= IDLE_SWEEPS) {
        this.reading.delete(file);
        this.openResident.delete(file);
        this.lru.closed(file, bytes);
      }
    }
    return this.openBytes() > this.capBytes;
  }

  /** Cap: the files being read were swept; their measurements no longer hold. */
  measuredOverCap(): void {
    this.openResident.clear();
  }

  /** The files a residency reading treats as held: the LRU's and those being read, each once. */
  heldFiles(): File[] {
    return [...new Set([...this.lru.paths(), ...this.reading.keys()])];
  }

  /** Bytes the cap believes it holds: the LRU plus the resident bytes of the files being read. */
  heldBytes(): number {
    return this.lru.heldBytes + this.openBytes();
  }

  private openBytes(): number {
    let total = 0;
    for (const bytes of this.openResident.values()) total += bytes;
    return total;
  }
}

/**
 * Files closed by the job and still counted as cached, least recently closed
 * first: the LRU the what-if model simulates (src/whatif/hit-ratio.ts), a
 * file's bytes standing for its pages. A Map keeps insertion order, so
 * re-inserting a file moves it to the most recent end in O(1).
 */
export class CacheLru<File = string> {
  private readonly files = new Map<File, number>();
  private total = 0;

  /** Bytes the files held add up to. */
  get heldBytes(): number {
    return this.total;
  }

  has(path: File): boolean {
    return this.files.has(path);
  }

  /** The job closed `path` (`bytes` of it cached): it becomes the most recently used file. */
  closed(path: File, bytes: number): void {
    this.remove(path);
    const counted = Math.max(0, bytes);
    this.files.set(path, counted);
    this.total += counted;
  }

  /** `path` is being read again (or is gone): it leaves the LRU until its next close. */
  remove(path: File): void {
    const bytes = this.files.get(path);
    if (bytes === undefined) return;
    this.files.delete(path);
    this.total -= bytes;
  }

  /**
   * Takes the least recently closed files out until the rest fit in
   * `budgetBytes` and returns them, oldest first: the caller evicts them. A
   * budget of 0 or less empties the LRU (the cold keeper's case), and a file
   * larger than the budget is never held.
   */
  overBudget(budgetBytes: number): File[] {
    const out: File[] = [];
    for (const [path, bytes] of this.files) {
      // With no budget every file goes, those of unknown (0) size too.
      if (budgetBytes > 0 && this.total <= budgetBytes) break;
      this.files.delete(path);
      this.total -= bytes;
      out.push(path);
    }
    return out;
  }

  /** The held files, oldest first. */
  paths(): File[] {
    return [...this.files.keys()];
  }
}
