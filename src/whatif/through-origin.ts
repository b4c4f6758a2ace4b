// The curve both measured sweeps are read through: efficiency against CPUs (cpu-scaling.ts) and against loader workers
// (fit/loader-workers.ts).

/**
 * y at `x` on the piecewise-linear curve through (0, 0) and `points` (x ascending): linear between neighbours, and past
 * the last point at the last segment's slope, never falling (a count beyond the sweep gains what the last step gained,
 * or nothing).
 */
export function throughOrigin(points: readonly { x: number; y: number }[], x: number): number {
  let previous = { x: 0, y: 0 };
  for (const point of points) {
    if (x <= point.x) return previous.y + ((x - previous.x) / (point.x - previous.x)) * (point.y - previous.y);
    previous = point;
  }
  const before = points.length > 1 ? points[points.length - 2] : { x: 0, y: 0 };
  const slope = Math.max(0, (previous.y - before.y) / (previous.x - before.x));
  return previous.y + slope * (x - previous.x);
}
