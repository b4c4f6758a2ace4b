/**
 * Seeded pseudo-random numbers, shared by every layer: the emulator's datasets and epoch orders, the what-if's
 * simulated epochs, the overlap probe's and the cached mode's seeded subsets, and test series.
 */

/** mulberry32: a small, fast 32-bit generator; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let z = state;
    z = Math.imul(z ^ (z >>> 15), z | 1);
    z ^= z + Math.imul(z ^ (z >>> 7), z | 61);
    return ((z ^ (z >>> 14)) >>> 0) / 4294967296;
  };
}

/** Mixes several integers into one 32-bit seed (so epoch e of seed s gets its own stream). */
export function mixSeed(...parts: number[]): number {
  let h = 0x9e3779b9;
  for (const part of parts) {
    h = Math.imul(h ^ (part >>> 0), 0x85ebca6b) >>> 0;
    h = (h ^ (h >>> 13)) >>> 0;
    h = Math.imul(h, 0xc2b2ae35) >>> 0;
    h = (h ^ (h >>> 16)) >>> 0;
  }
  return h;
}

/** Fisher-Yates: fills `order` with 0..length-1 in a random order drawn from `random`; returns it. */
export function shuffledIndices<T extends { length: number; [index: number]: number }>(
  order: T,
  random: () => number,
): T {
  for (let i = 0; i < order.length; i++) order[i] = i;
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    const tmp = order[i];
    order[i] = order[j];
    order[j] = tmp;
  }
  return order;
}

/** Fisher-Yates permutation of 0..n-1. */
export function permutation(n: number, random: () => number): number[] {
  return shuffledIndices(new Array<number>(n).fill(0), random);
}

/** Fills a buffer with seeded random bytes (xorshift32, 4 bytes per step). */
export function randomBytes(length: number, seed: number): Buffer {
  const words = new Uint32Array(Math.ceil(length / 4));
  let x = seed >>> 0 || 0x6b43a9b5;
  for (let i = 0; i < words.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    words[i] = x >>> 0;
  }
  return Buffer.from(words.buffer, 0, length);
}
