// Deadlines on the profiler's own network waits: an endpoint that stops answering ends the wait with an error naming
// it. Two, as curl's: one for an answer, one for a body.
import { Transform, type Readable } from 'node:stream';

/** How long a request may wait, ms. */
export interface NetDeadlines {
  /** From sending a request (connecting, TLS and any retry included) to its response's headers. */
  answerMs: number;
  /** Between two bytes of a response body. */
  idleMs: number;
}

// Both deadlines: an object store under load answers in well under a second and keeps a body flowing; 30 s is an
// endpoint that stopped, even at the 400 kbit/s of a degraded link (boto3 waits 60 s).
const DEADLINE_SEC = 30;
/** Sets both deadlines, in seconds (tests; a link slower than any the default allows for). */
export const DEADLINE_ENV = 'DSA_NET_DEADLINE_SEC';

/** The deadlines now: the defaults, or DSA_NET_DEADLINE_SEC for both where it is a positive number. */
export function netDeadlines(env: NodeJS.ProcessEnv = process.env): NetDeadlines {
  const sec = Number(env[DEADLINE_ENV]);
  if (Number.isFinite(sec) && sec > 0) return { answerMs: sec * 1000, idleMs: sec * 1000 };
  return { answerMs: DEADLINE_SEC * 1000, idleMs: DEADLINE_SEC * 1000 };
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

/** Runs `start` with a signal aborted after `ms` (a StallError) or by the caller's `signal` (its reason). */
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

/** `body` behind an idle watchdog of `ms` (while the reader wants bytes); failures go through `failure`. */
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
