import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeDataSource } from '../support/fake-data-source.js';
import { SUPERVISION } from '../../src/profile/run-defaults.js';
import { sharedRunSettings } from '../../src/profile/run-setup.js';

test("a command's run settings keep what it set and take SUPERVISION's defaults for the rest", async () => {
  const dataSource = new FakeDataSource();
  const dataset = await dataSource.list();
  const job = { cwd: '/job', env: { A: '1' }, dataSource, timeoutSec: 60 };
  // validate sets none of the supervision settings.
  assert.deepEqual(sharedRunSettings(job, dataset), { ...job, dataset, ...SUPERVISION, gpu: undefined });
  // profile sets them all from its flags.
  const flags = {
    firstIterationTimeoutSec: 7,
    hangTimeoutSec: 9,
    stopGraceSec: 3,
    killGraceSec: 2,
    sync: false,
    pollMs: 50,
  };
  const gpu = { latest: () => null, readings: () => [] };
  assert.deepEqual(sharedRunSettings({ ...job, ...flags }, dataset, gpu), { ...job, dataset, ...flags, gpu });
});
