/**
 * The job's first batch: when it comes after the job starts. Two parts measured in every run (modes.<mode>.firstBatch):
 * the job's own start-up before its loader is first asked (imports, the model), which no data setting changes; and the
 * loader's first wait (its workers' start, the first batch's prep, and cold its fetch). The cold wait less the cached
 * one is what fetching the first batch took; model.ts (firstBatchSec) scales that part to the asked bandwidth, latency
 * and requests in flight.
 */
import { parameter, type Fitted } from './fitted.js';
import { proven, type MeasuredModes } from './modes.js';

export interface FirstBatchFit {
  /** As measured, s; null where the cached or cold mode did not record its first batch (older profiles). */
  firstBatch: { startupSec: number; cachedFirstWaitSec: number; coldFirstWaitSec: number } | null;
}

export function fitFirstBatch(modes: MeasuredModes): Fitted<FirstBatchFit> {
  const cached = modes.cached.firstBatch;
  const cold = modes.cold?.firstBatch;
  if (!cached || !cold || !modes.cold)
    return { kind: 'fitted', value: { firstBatch: null }, parameters: [], caveats: [] };
  const value = {
    startupSec: cold.startupSec,
    cachedFirstWaitSec: cached.firstWaitSec,
    coldFirstWaitSec: cold.firstWaitSec,
  };
  return {
    kind: 'fitted',
    value: { firstBatch: value },
    parameters: [
      parameter(
        'T0',
        "the job's start-up before its loader is first asked",
        value.startupSec,
        's',
        'modes.cold.firstBatch.startupSec',
        proven(modes.cold),
      ),
      parameter(
        'W1',
        "the loader's first wait, data in memory",
        value.cachedFirstWaitSec,
        's',
        'modes.cached.firstBatch.firstWaitSec',
        proven(modes.cached),
      ),
      parameter(
        'W1c',
        "the loader's first wait, cold",
        value.coldFirstWaitSec,
        's',
        'modes.cold.firstBatch.firstWaitSec',
        proven(modes.cold),
      ),
    ],
    caveats: [],
  };
}
