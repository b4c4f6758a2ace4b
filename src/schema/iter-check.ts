/**
 * IterEventSchema's rules for the one event a job writes per iteration, checked by hand. zod's parse of an object costs
 * tens of microseconds while its code is still cold, which is most of a short profile: at thousands of iterations it
 * was most of the events reader's CPU. Only acceptance is decided here: anything this check does not accept goes to
 * zod, which stays the judge of what is invalid and says why (a property test holds the two together:
 * test/schema/iter-check.test.ts).
 */
import { MAX_ITERATION_MS, PROTOCOL_VERSION, type IterEvent } from './events.js';

/** The event as IterEventSchema would parse it, or null when this check does not vouch for it. */
export function checkedIterEvent(value: unknown): IterEvent | null {
  if (typeof value !== 'object' || value === null) return null;
  const e = value as Record<string, unknown>;
  if (e.type !== 'iter' || e.v !== PROTOCOL_VERSION) return null;
  const { t, rank, i, waitMs, computeMs, samples, bytes, processCpuMs } = e;
  if (!nonnegative(t) || !count(i) || !count(samples) || !duration(waitMs) || !duration(computeMs)) return null;
  if (rank !== undefined && !count(rank)) return null;
  if (bytes !== undefined && !nonnegative(bytes)) return null;
  if (processCpuMs !== undefined && !nonnegative(processCpuMs)) return null;
  const event: IterEvent = { v: PROTOCOL_VERSION, type: 'iter', t, rank: rank ?? 0, i, waitMs, computeMs, samples };
  if (bytes !== undefined) event.bytes = bytes;
  if (processCpuMs !== undefined) event.processCpuMs = processCpuMs;
  return event;
}

function nonnegative(x: unknown): x is number {
  return typeof x === 'number' && Number.isFinite(x) && x >= 0;
}

/** A non-negative integer zod's int() takes (a safe integer). */
function count(x: unknown): x is number {
  return typeof x === 'number' && Number.isSafeInteger(x) && x >= 0;
}

function duration(x: unknown): x is number {
  return nonnegative(x) && x <= MAX_ITERATION_MS;
}
