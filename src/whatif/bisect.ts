/**
 * Bisection over a monotone test: `above(x)` is false below some point of [low, high] and true from it on. Returns the
 * final bracket around that point after `steps` halvings, or once it is no wider than `width`. Callers take its low end
 * (the last x that passed below), its high end, or the middle.
 */
export function bisect(
  low: number,
  high: number,
  above: (x: number) => boolean,
  steps = 60,
  width = 0,
): { low: number; high: number } {
  for (let step = 0; step < steps && high - low > width; step++) {
    const mid = (low + high) / 2;
    if (above(mid)) high = mid;
    else low = mid;
  }
  return { low, high };
}

/** The middle of a bracket. */
export function middle(bracket: { low: number; high: number }): number {
  return (bracket.low + bracket.high) / 2;
}
