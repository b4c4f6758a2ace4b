import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Interrupts } from '../../src/profile/interrupts.js';
import type { Job } from '../../src/profile/supervisor.js';

/** A job that records what the interrupts asked of it, and a way to send the CLI a signal. */
function setUp() {
  const asked: string[] = [];
  const job: Job = {
    pid: 1,
    done: new Promise(() => undefined),
    terminate: async () => void asked.push('terminate'),
    timeOut: async () => void asked.push('timeOut'),
    kill: () => void asked.push('kill'),
    pass: (signal) => void asked.push(`pass ${signal}`),
    markStopRequested: () => undefined,
  };
  let handler: (signal?: NodeJS.Signals) => void = () => undefined;
  const interrupts = new Interrupts((h) => {
    handler = h;
    return () => undefined;
  });
  return { asked, job, interrupts, send: (signal: NodeJS.Signals) => handler(signal) };
}

test('a job being profiled is stopped gently at the first Ctrl-C and killed at the second', () => {
  const { asked, job, interrupts, send } = setUp();
  interrupts.attach(job);
  send('SIGINT');
  send('SIGINT');
  assert.deepEqual(asked, ['terminate', 'kill']);
  assert.equal(interrupts.userInterrupted, true);
});

test('a run the profile rides on gets Ctrl-C and SIGTERM as themselves; the third interrupt kills it', () => {
  const { asked, job, interrupts, send } = setUp();
  interrupts.passOn(job);
  send('SIGINT');
  send('SIGTERM');
  send('SIGINT');
  assert.deepEqual(asked, ['pass SIGINT', 'pass SIGTERM', 'kill']);
});

test("the job's own signals (SIGUSR1, SIGUSR2) are passed on and are not interrupts", () => {
  const { asked, job, interrupts, send } = setUp();
  interrupts.attach(job);
  send('SIGUSR1');
  send('SIGUSR2');
  assert.deepEqual(asked, ['pass SIGUSR1', 'pass SIGUSR2']);
  assert.equal(interrupts.interrupted, false);
  assert.equal(interrupts.signal.aborted, false);
});
