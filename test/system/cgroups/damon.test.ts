import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pauseReclaimers, readRecordedPause, reclaimingDamonSchemes } from '../../../src/system/cgroups/damon.js';

/** A DAMON sysfs tree as the kernel lays it out: kdamonds/N/{state,contexts/M/{operations,schemes/S/action}}. */
const made: string[] = [];
after(() => made.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

function fakeDamon(kdamonds: { state: string; operations: string; actions: string[] }[]): string {
  const admin = mkdtempSync(join(tmpdir(), 'dsa-damon-'));
  made.push(admin);
  kdamonds.forEach((k, n) => {
    const context = join(admin, 'kdamonds', String(n), 'contexts', '0');
    mkdirSync(context, { recursive: true });
    writeFileSync(join(admin, 'kdamonds', String(n), 'state'), `${k.state}\n`);
    writeFileSync(join(context, 'operations'), `${k.operations}\n`);
    k.actions.forEach((action, s) => {
      mkdirSync(join(context, 'schemes', String(s)), { recursive: true });
      writeFileSync(join(context, 'schemes', String(s), 'action'), `${action}\n`);
    });
  });
  writeFileSync(join(admin, 'kdamonds', 'nr_kdamonds'), `${kdamonds.length}\n`);
  return admin;
}

const NO_MODULE = join(tmpdir(), 'no-such-damon-reclaim');

test('a running DAMON pageout scheme on physical memory is found; stopped ones, other actions, vaddr and a missing DAMON are not', () => {
  assert.deepEqual(
    reclaimingDamonSchemes(fakeDamon([{ state: 'on', operations: 'paddr', actions: ['pageout'] }]), NO_MODULE),
    ['kdamond 0: pageout on paddr memory'],
  );
  assert.deepEqual(
    reclaimingDamonSchemes(fakeDamon([{ state: 'off', operations: 'paddr', actions: ['pageout'] }]), NO_MODULE),
    [],
  );
  assert.deepEqual(
    reclaimingDamonSchemes(
      fakeDamon([{ state: 'on', operations: 'paddr', actions: ['lru_deprio', 'stat'] }]),
      NO_MODULE,
    ),
    [],
  );
  assert.deepEqual(
    reclaimingDamonSchemes(fakeDamon([{ state: 'on', operations: 'vaddr', actions: ['pageout'] }]), NO_MODULE),
    [],
  );
  assert.deepEqual(reclaimingDamonSchemes(join(tmpdir(), 'no-such-damon'), NO_MODULE), []);
});

test('the DAMON_RECLAIM module counts when enabled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-damon-reclaim-'));
  made.push(dir);
  const enabled = join(dir, 'enabled');
  writeFileSync(enabled, 'Y\n');
  assert.deepEqual(reclaimingDamonSchemes(join(tmpdir(), 'no-such-damon'), enabled), [
    'DAMON_RECLAIM: pageout on paddr memory',
  ]);
  writeFileSync(enabled, 'N\n');
  assert.deepEqual(reclaimingDamonSchemes(join(tmpdir(), 'no-such-damon'), enabled), []);
});

test('pauseReclaimers turns reclaiming kdamonds and DAMON_RECLAIM off, leaves the others, and restore turns them back on', () => {
  const admin = fakeDamon([
    { state: 'on', operations: 'paddr', actions: ['pageout'] },
    { state: 'on', operations: 'vaddr', actions: ['pageout'] },
  ]);
  const enabled = join(admin, 'enabled');
  writeFileSync(enabled, 'Y\n');
  const state = (k: number) => readFileSync(join(admin, 'kdamonds', String(k), 'state'), 'utf8').trim();
  const paused = pauseReclaimers(admin, enabled);
  assert.deepEqual(paused.paused, ['DAMON_RECLAIM', 'kdamond 0']);
  assert.deepEqual(paused.failures, []);
  assert.deepEqual([state(0), state(1), readFileSync(enabled, 'utf8').trim()], ['off', 'on', 'N']);
  paused.restore();
  paused.restore();
  assert.deepEqual([state(0), state(1), readFileSync(enabled, 'utf8').trim()], ['on', 'on', 'Y']);
});

test('a profiler killed with SIGKILL while reclaim is paused: the guardian turns it back on within seconds', async () => {
  const admin = fakeDamon([{ state: 'on', operations: 'paddr', actions: ['pageout'] }]);
  const damonModule = new URL('../../../src/system/cgroups/damon.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    const { pauseReclaimers } = await import(${JSON.stringify(damonModule)});
    const p = pauseReclaimers(${JSON.stringify(admin)}, '/nonexistent');
    console.log(p.paused.join(','));
    setInterval(() => {}, 1000);
  `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  const [line] = (await once(child.stdout!, 'data')) as [Buffer];
  assert.equal(line.toString().trim(), 'kdamond 0');
  const state = () => readFileSync(join(admin, 'kdamonds', '0', 'state'), 'utf8').trim();
  assert.equal(state(), 'off');
  child.kill('SIGKILL');
  await once(child, 'exit');
  const deadline = Date.now() + 5000;
  while (state() !== 'on' && Date.now() < deadline) await sleep(100);
  assert.equal(state(), 'on', 'restored after the profiler died');
});

test('a pause is recorded on disk for clean while it lasts: restore removes the record, and so does the guardian after a SIGKILL', async () => {
  const admin = fakeDamon([{ state: 'on', operations: 'paddr', actions: ['pageout'] }]);
  const record = join(admin, 'cache', 'ds-analyzer', 'damon-paused.json');
  const paused = pauseReclaimers(admin, NO_MODULE, record);
  assert.deepEqual(readRecordedPause(record), {
    pid: process.pid,
    switches: [{ name: 'kdamond 0', file: join(admin, 'kdamonds', '0', 'state'), on: 'on' }],
  });
  paused.restore();
  assert.equal(existsSync(record), false);

  const damonModule = new URL('../../../src/system/cgroups/damon.js', import.meta.url).href;
  const child = spawn(
    process.execPath,
    [
      '--input-type=module',
      '-e',
      `
    const { pauseReclaimers } = await import(${JSON.stringify(damonModule)});
    pauseReclaimers(${JSON.stringify(admin)}, '/nonexistent', ${JSON.stringify(record)});
    console.log('paused');
    setInterval(() => {}, 1000);
  `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  await once(child.stdout!, 'data');
  assert.equal(existsSync(record), true);
  child.kill('SIGKILL');
  await once(child, 'exit');
  const deadline = Date.now() + 5000;
  while (existsSync(record) && Date.now() < deadline) await sleep(100);
  assert.equal(existsSync(record), false, 'the guardian removed the record with the pause');
  assert.equal(readFileSync(join(admin, 'kdamonds', '0', 'state'), 'utf8').trim(), 'on');
});
