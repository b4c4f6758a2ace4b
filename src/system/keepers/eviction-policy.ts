// What an event-driven keeper evicts, and when; pure bookkeeping.
//
// - A closed file is done with: a cap enters it in an LRU by close time and
//   evicts the least recently closed while the LRU and the files being read
//   hold more than the cap; a cold keeper is the cap of 0.
// - A file being read and not closed (a streamed shard) is swept page by page,
//   or, under a cap, measured and counted as the most recently used, until
//   IDLE_SWEEPS sweeps in a row find it idle (under a cap it then enters the
//   LRU). After lost events, the files being read are forgotten.

// Sweeps that find a file being read idle, in a row, before it leaves the sweeps.
export const IDLE_SWEEPS = 3;

/** What the policy keeps of a file being read; a keeper extends it with its own (a descriptor, a path). */
export interface FileBeingRead {
  /** Sweeps in a row that found the file idle. */
  idleSweeps: number;
}

/** The eviction policy of one keeper; a file is whatever the keeper knows it by (an index, a device and inode). */
export class EvictionPolicy<File, State extends FileBeingRead = FileBeingRead> {
  /** Files being read and not closed since. */
  private readonly reading = new Map<File, State>();
  /** Pages of swept files seen resident at the previous sweep, until the file is evicted or no longer read. */
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

  /** The job closed `file` (`bytes` of it cached): it enters the LRU; evictions() answers whether it goes. */
  closed(file: File, bytes: number): void {
    this.reading.delete(file);
    this.openResident.delete(file);
    this.lru.closed(file, bytes);
  }

  /** `file` was closed and evicted at once; returns its state when it was being read. */
  stopReading(file: File): State | undefined {
    const state = this.reading.get(file);
    this.reading.delete(file);
    this.previous.delete(file);
    return state;
  }

  /** Takes out of the LRU the files to evict now, least recently closed first, while over the cap. */
  evictions(): File[] {
    const out = this.lru.overBudget(this.capBytes - this.openBytes());
    for (const file of out) this.previous.delete(file);
    return out;
  }

  /** Whether an overflow sweep leaves `file` alone: the cap holds it. */
  keeps(file: File): boolean {
    return this.lru.has(file);
  }

  /** Events were lost: the files being read are forgotten; returns their states (to release what they hold). */
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

  /** One sweep of the files being read; `sweep` says if one is in use, `left` gets one idle IDLE_SWEEPS times. */
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

  /** Cap: one measurement of the files being read (null: last value); true when they alone hold more than the cap. */
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

/** Files closed and counted as cached, least recently closed first (the LRU whatif/hit-ratio.ts simulates). */
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

  /** Takes out (and returns) the least recently closed files until the rest fit in `budgetBytes`; <= 0 empties it. */
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
