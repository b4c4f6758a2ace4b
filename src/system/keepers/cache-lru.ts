// The bookkeeping of a dataset cache cap: which dataset files the job has
// finished with and the page cache still holds, least recently closed first.
//
// Pure (no system calls): the keeper (inotify-keeper.ts) feeds it closes and
// reads and evicts what it answers. File-granular, ordered by close time: the
// LRU the what-if model simulates (src/whatif/hit-ratio.ts), with a file's
// bytes standing for its pages. A Map keeps insertion order, so re-inserting a
// file moves it to the most recent end in O(1).

/**
 * Files closed by the job and still counted as cached, in least-recently-closed order; a file is its path or its index
 * in a file table.
 */
export class CacheLru<File = string> {
  private readonly files = new Map<File, number>();
  private total = 0;

  /** Bytes the files held add up to. */
  get heldBytes(): number {
    return this.total;
  }

  /** Files held. */
  get size(): number {
    return this.files.size;
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

  /** The held files, oldest first (for tests and sampling). */
  paths(): File[] {
    return [...this.files.keys()];
  }
}
