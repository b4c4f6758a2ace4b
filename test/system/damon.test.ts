import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { reclaimingDamonSchemes } from '../../src/system/damon.js';

/** A DAMON sysfs tree as the kernel lays it out: kdamonds/N/{state,contexts/M/{operations,schemes/S/action}}. */
function fakeDamon(kdamonds: { state: string; operations: string; actions: string[] }[]): string {
  const admin = mkdtempSync(join(tmpdir(), 'dsa-damon-'));
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
  assert.deepEqual(reclaimingDamonSchemes(fakeDamon([{ state: 'on', operations: 'paddr', actions: ['pageout'] }]), NO_MODULE), ['kdamond 0: pageout on paddr memory']);
  assert.deepEqual(reclaimingDamonSchemes(fakeDamon([{ state: 'off', operations: 'paddr', actions: ['pageout'] }]), NO_MODULE), []);
  assert.deepEqual(reclaimingDamonSchemes(fakeDamon([{ state: 'on', operations: 'paddr', actions: ['lru_deprio', 'stat'] }]), NO_MODULE), []);
  assert.deepEqual(reclaimingDamonSchemes(fakeDamon([{ state: 'on', operations: 'vaddr', actions: ['pageout'] }]), NO_MODULE), []);
  assert.deepEqual(reclaimingDamonSchemes(join(tmpdir(), 'no-such-damon'), NO_MODULE), []);
});

test('the DAMON_RECLAIM module counts when enabled', () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-damon-reclaim-'));
  const enabled = join(dir, 'enabled');
  writeFileSync(enabled, 'Y\n');
  assert.deepEqual(reclaimingDamonSchemes(join(tmpdir(), 'no-such-damon'), enabled), ['DAMON_RECLAIM: pageout on paddr memory']);
  writeFileSync(enabled, 'N\n');
  assert.deepEqual(reclaimingDamonSchemes(join(tmpdir(), 'no-such-damon'), enabled), []);
});
