/**
 * A profile whose data's endpoint fails or stops answering after the modes
 * began (the cached mode's download, the storage probe), or that the user
 * interrupts during a download: it ends with the endpoint's one line and its
 * exit code (or as interrupted), the modes measured before saved as partial.
 */
import assert from 'node:assert/strict';
import os from 'node:os';
import path from 'node:path';
import { test } from 'node:test';
import { ExitCode } from '../../src/errors.js';
import { runProfile, type ProfileRunInput } from '../../src/profile/run-profile.js';
import type { SourceRun } from '../../src/profile/data-sources/source-run.js';
import { FakeDataSource } from '../support/fake-data-source.js';
import { EndpointError } from '../../src/system/network/remote-objects.js';
import { MemorySink } from '../support/memory-sink.js';
import type { ModeResult } from '../../src/schema/profile.js';
import { fakeModeRunner, fakeProfileInput, type FakeJob } from './fake-mode-runner.js';

const JOB: FakeJob = {
  waitMs: { synthetic: 0, cached: 10, cold: 40 },
  stepMs: { synthetic: 100, cached: 100, cold: 100 },
  driftPerSec: 0,
  noise: 0.02,
  startupSec: 1,
  seed: 3,
};
const dir = path.join(os.tmpdir(), `dsa-endpoint-stop-unwritten-${process.pid}`);
const STALLED = 'fetching s3://data/train/ at http://127.0.0.1:9: the endpoint stopped answering (nothing for 30 s)';

/** A fake source that keeps the run it is bound to. */
class BoundSource extends FakeDataSource {
  run: SourceRun | null = null;
  bindRun(run: SourceRun): void {
    this.run = run;
  }
}

function input(name: string, overrides: Partial<ProfileRunInput>): { input: ProfileRunInput; sink: MemorySink } {
  const sink = new MemorySink();
  return {
    input: fakeProfileInput(dir, name, undefined, { sink, passes: 1, modes: ['cold', 'cached'], ...overrides }),
    sink,
  };
}

test('a storage probe whose endpoint stopped answering ends the profile: exit Environment, its line, the modes saved', async () => {
  const fake = fakeModeRunner(JOB);
  const { input: run, sink } = input('probe-stalled', {
    modeRunner: fake.run,
    readProber: async () => {
      throw new EndpointError(STALLED, ExitCode.Environment, true);
    },
  });
  const outcome = await runProfile(run, { onSignal: () => () => {} });
  assert.equal(outcome.exitCode, ExitCode.Environment);
  assert.equal(outcome.stopped, STALLED);
  const saved = sink.profile(run.outFile);
  assert.equal(saved.status, 'partial');
  assert.equal(saved.modes.cold?.status, 'ok');
  assert.equal(saved.modes.cached?.status, 'ok');
});

test('a probe that fails otherwise is still a warning: the profile completes', async () => {
  const warnings: string[] = [];
  const { input: run } = input('probe-refused', {
    modeRunner: fakeModeRunner(JOB).run,
    readProber: async () => {
      throw new EndpointError('fetching x: the endpoint does not answer (ECONNREFUSED)', ExitCode.Environment);
    },
  });
  const outcome = await runProfile(run, { onSignal: () => () => {}, onWarning: (w) => warnings.push(w) });
  assert.equal(outcome.exitCode, ExitCode.Ok);
  assert.ok(
    warnings.some((w) => /storage read probe failed \(fetching x/.test(w)),
    warnings.join('\n'),
  );
});

test("a download that stalls before the second mode ends the profile with the endpoint's line; the first mode is saved", async () => {
  const fake = fakeModeRunner(JOB);
  const { input: run, sink } = input('fill-stalled', {
    modeRunner: async (request) => {
      if (request.mode === 'cached') throw new EndpointError(STALLED, ExitCode.Environment, true);
      return fake.run(request);
    },
  });
  const outcome = await runProfile(run, { onSignal: () => () => {} });
  assert.equal(outcome.exitCode, ExitCode.Environment);
  assert.equal(outcome.stopped, STALLED);
  assert.equal(sink.profile(run.outFile).modes.cold?.status, 'ok');
});

test("the user's interrupt reaches the source's download through bindRun: the profile ends as interrupted, the first mode saved", async () => {
  const fake = fakeModeRunner(JOB);
  const source = new BoundSource();
  let interrupt: () => void = () => undefined;
  const { input: run, sink } = input('fill-interrupted', {
    dataSource: source,
    modeRunner: async (request): Promise<ModeResult> => {
      if (request.mode !== 'cached') return fake.run(request);
      // A download in flight: it ends when the run's signal aborts, with its reason.
      const signal = source.run!.signal;
      setTimeout(interrupt, 20);
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw signal.reason;
    },
  });
  const outcome = await runProfile(run, {
    onSignal: (handler) => {
      interrupt = handler;
      return () => undefined;
    },
  });
  assert.equal(outcome.exitCode, ExitCode.Interrupted);
  assert.equal(outcome.stopped, undefined);
  assert.equal(sink.profile(run.outFile).modes.cold?.status, 'ok');
});
