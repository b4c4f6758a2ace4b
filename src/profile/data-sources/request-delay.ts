// Latency injection, a source's capability: every request to the data's origin delayed (validate's latency points).
import type { Throttle } from './throttle.js';

/** A source whose requests can be delayed. */
export interface DelaysRequests {
  /** Delays every request to the origin by `sec` until the returned throttle's remove. */
  delayRequests(sec: number): Throttle;
}
