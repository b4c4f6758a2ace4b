// Deadlines on the profiler's own network waits (the listing, the cached
// mode's download, the storage probe, the tar-shard count, the metering
// proxy's upstream connections): an endpoint that stops answering (a server
// stopped, not killed; a link that drops every packet) ends the wait with an
// error naming it, instead of hanging the CLI. Two deadlines, as curl's
// --connect-timeout and --speed-time, and boto3's connect/read timeouts:
// one for an answer to start, one for a body that stops flowing.
import { Transform, type Readable } from 'node:stream';

/** How long a request may wait, ms. */
export interface NetDeadlines {
  /** From sending a request (connecting, TLS and any retry included) to its response's headers. */
  answerMs: number;
  /** Between two bytes of a response body. */
  idleMs: number;
}

/**
 * 30 s, as boto3's read_timeout is 60 s and its connect 60 s: an object store under load answers its first byte in
 * well under a second and keeps a body flowing; a wait of 30 s is an endpoint that stopped, not a slow one, even at
 * the 400 kbit/s of a degraded link (a 64 KiB socket buffer fills in under 2 s there).
 */
const ANSWER_SEC = 30;
/** The same wait for a body that stopped: a stalled stream, not a slow one. */
const IDLE_SEC = 30;
/** Sets both deadlines, in seconds (tests; a link slower than any the default allows for). */
export const DEADLINE_ENV = 'DSA_NET_DEADLINE_SEC';

/** The deadlines now: the defaults, or DSA_NET_DEADLINE_SEC for both where it is a positive number. */
export function netDeadlines(env: NodeJS.ProcessEnv = process.env): NetDeadlines {
  const sec = Number(env[DEADLINE_ENV]);
  if (Number.isFinite(sec) && sec > 0) return { answerMs: sec * 1000, idleMs: sec * 1000 };
  return { answerMs: ANSWER_SEC * 1000, idleMs: IDLE_SEC * 1000 };
}

/** A wait that passed its deadline: the endpoint stopped answering. */
export class StallError extends Error {
  constructor(
    /** What was awaited: a response's start, or more of its body. */
    readonly awaited: 'answer' | 'body',
    /** The deadline that passed, ms. */
    readonly afterMs: number,
  ) {
    super(`no ${awaited === 'answer' ? 'answer' : 'byte of the body'} within ${Math.round(afterMs / 1000)} s`);
    this.name = 'StallError';
  }
}

/** Whether `error` is an abort (the caller's signal), not a failure of the endpoint. */
export function isAbort(error: unknown): boolean {
  return (error as { name?: string } | null)?.name === 'AbortError';
}

/**
 * Runs `start` with a signal aborted when `ms` pass before it settles, or when the caller's `signal` aborts. The
 * deadline rejects with a StallError; the caller's abort with its own reason. `start` must honour the signal: it
 * destroys what it has in flight.
 */
export async function beforeDeadline<T>(
  ms: number,
  signal: AbortSignal | undefined,
  start: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  signal?.throwIfAborted();
  const controller = new AbortController();
  const stall = new StallError('answer', ms);
  const timer = setTimeout(() => controller.abort(stall), ms);
  const onAbort = () => controller.abort(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    return await start(controller.signal);
  } catch (error) {
    // The request fails with its own abort error: the reason says which deadline or caller ended it.
    throw controller.signal.aborted ? controller.signal.reason : error;
  } finally {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * `body` behind an idle watchdog: the stream it returns fails with `failure(StallError)` when no byte comes for `ms`
 * while the reader wants them, with the caller's abort reason when `signal` aborts, and with `failure(error)` when
 * the body fails; `body` (its socket) is destroyed then.
 */
export function watchBody(
  body: Readable,
  ms: number,
  failure: (error: unknown) => Error,
  signal?: AbortSignal,
  /** Told each chunk's bytes as it passes (a download's progress). */
  onBytes?: (bytes: number) => void,
): Readable {
  // A body its reader holds back (back-pressure pauses it) is waiting on the reader, not on the endpoint.
  const timer = setTimeout(() => (body.isPaused() ? timer.refresh() : fail(new StallError('body', ms))), ms);
  timer.unref();
  const watched = new Transform({
    transform(chunk, _encoding, done) {
      timer.refresh();
      onBytes?.((chunk as Buffer).length);
      done(null, chunk);
    },
  });
  const fail = (error: unknown) => {
    if (!watched.destroyed) watched.destroy(signal?.aborted ? signal.reason : failure(error));
  };
  const onAbort = () => fail(signal!.reason);
  signal?.addEventListener('abort', onAbort, { once: true });
  body.once('error', fail);
  watched.once('close', () => {
    clearTimeout(timer);
    signal?.removeEventListener('abort', onAbort);
    // A reader that stops early, a deadline or an abort: the body's socket goes too.
    if (!body.readableEnded) body.destroy();
  });
  body.pipe(watched);
  if (signal?.aborted) onAbort();
  return watched;
}
