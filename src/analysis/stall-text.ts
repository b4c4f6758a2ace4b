// The words of a stalled block (stalls.ts): what stopped, and when into the block.
import type { Mode } from '../schema/events.js';

const sec = (s: number): string => (s >= 10 ? s.toFixed(0) : s >= 1 ? s.toFixed(1) : String(Number(s.toPrecision(2))));

export const STALL_TEXT = {
  noBytes: (mode: Mode, fetchesFrom: 'storage' | 'network', atSec: number, silentSec: number, toEnd: boolean): string =>
    `${fetchesFrom === 'network' ? 'the endpoint' : 'storage'} sent nothing from ${sec(atSec)} s into the ${mode} ` +
    `block, for ${sec(silentSec)} s${toEnd ? ' until the block ended' : ''}, while the job waited on data`,

  requestErrors: (mode: Mode, atSec: number, failures: number, requests: number): string =>
    `requests for the data failed ${sec(atSec)} s into the ${mode} block: ${failures} of ${requests} failed ` +
    "(counted in the job's HTTP clients or the metering proxy)",

  hung: (sinceSec: number, medianSec: number): string =>
    `no iteration for ${sec(sinceSec)} s, ${Math.round(sinceSec / medianSec)}x the median ${sec(medianSec)} s: ` +
    'the job looks hung',

  hungInBlock: (mode: Mode, atSec: number, sinceSec: number, medianSec: number): string =>
    `no iteration for ${sec(sinceSec)} s from ${sec(atSec)} s into the ${mode} block, ` +
    `${Math.round(sinceSec / medianSec)}x the median ${sec(medianSec)} s: the job looks hung`,

  /** A fetch stall that also set off the watchdog. */
  fetchAndHung: (fetch: string, hung: string): string => `${fetch}; the block was ended: ${hung}`,

  timedOut: (mode: Mode, timeoutSec: number, measured: number, minIterations: number): string =>
    `the ${mode} block reached --timeout (${sec(timeoutSec)} s) with ${measured} measured iteration` +
    `${measured === 1 ? '' : 's'}, fewer than the ${minIterations} a mode needs`,

  endedEarly: (mode: Mode, ran: number, measured: number, minIterations: number): string =>
    `the job ended by itself (exit 0) ${ran} iteration${ran === 1 ? '' : 's'} into the ${mode} block, ${measured} ` +
    `measured, fewer than the ${minIterations} a mode needs: an epoch limit (--epochs) or a short dataset ends it ` +
    'before its blocks are measured',

  /** What to do about a stall of each cause. */
  fix: {
    'no-bytes': "check the data's source (the endpoint, the link, the storage) and profile again once it answers",
    'request-errors': "check the data's source: the job's requests for the data failed; profile again once they pass",
    hung:
      'find where the job waits (py-spy dump --pid PID shows its stacks), fix it and profile again; ' +
      '--hang-timeout sets the least silence called hung',
    timeout: 'raise --timeout, or lower --min-iterations, so that the block can measure what it needs',
    ended: 'leave out the epoch limit (the profile stops the job once its modes are measured), or give it more data',
  } as Record<'no-bytes' | 'request-errors' | 'hung' | 'timeout' | 'ended', string>,

  /** The state proof's reason on a stalled block. */
  proofReason: (text: string): string => `the block stalled (${text})`,
} as const;
