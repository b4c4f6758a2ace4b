import assert from 'node:assert/strict';
import { test } from 'node:test';
import { finishKeeper } from '../../src/profile/cache-states/cache-state.js';
import { fakeColdKeeper } from '../support/fake-keeper.js';

test('finishKeeper stops the keeper and reports its re-evictions, mechanism and CPU', async () => {
  const keeper = fakeColdKeeper({ mechanism: 'inotify', reEvictions: 12, cpuSec: 0.25, sweeps: 40, errors: 1 });
  assert.deepEqual(await finishKeeper(keeper), { reEvictions: 12, keeper: { mechanism: 'inotify', cpuSec: 0.25 } });
  assert.deepEqual(keeper.calls, { scans: 0, stops: 1 });
});

test('finishKeeper names why the keeper fell back to scanning, and only then', async () => {
  const fallback = 'the inotify instances of this user are used up';
  const scan = await finishKeeper(fakeColdKeeper({ mechanism: 'scan', fallbackReason: fallback }));
  assert.deepEqual(scan.keeper, { mechanism: 'scan', cpuSec: 0, fallbackReason: fallback });
  assert.equal('fallbackReason' in (await finishKeeper(fakeColdKeeper())).keeper!, false);
});
