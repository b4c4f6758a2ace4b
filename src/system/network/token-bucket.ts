// A byte-rate cap shared by every connection through the metering proxy: the network's bandwidth is one pipe, so one
// bucket, whatever the number of requests in flight.

/** Bytes a bucket may hold: a burst of at most 50 ms at the rate, never less than one socket read. */
const BURST_SEC = 0.05;
const MIN_BURST_BYTES = 64 * 1024;

export class TokenBucket {
  private tokens: number;
  private readonly burst: number;
  private last: number;

  constructor(
    /** The cap, bytes per second. */
    readonly bytesPerSec: number,
    private readonly now: () => number = () => performance.now(),
  ) {
    if (!(bytesPerSec > 0)) throw new RangeError(`a byte-rate cap must be positive, got ${bytesPerSec}`);
    this.burst = Math.max(MIN_BURST_BYTES, bytesPerSec * BURST_SEC);
    this.tokens = this.burst;
    this.last = this.now();
  }

  /** Takes `bytes`, into debt where too few are held; returns the wait (ms) before sending them at the rate. */
  take(bytes: number): number {
    const now = this.now();
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) / 1000) * this.bytesPerSec);
    this.last = now;
    this.tokens -= bytes;
    return this.tokens >= 0 ? 0 : (-this.tokens / this.bytesPerSec) * 1000;
  }
}
