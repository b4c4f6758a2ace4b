import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { writeAtomic } from '../../src/store/write-atomic.js';

test('writeAtomic replaces the file whole and leaves no temp file beside it', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-write-atomic-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'report.md');
  writeFileSync(file, 'old');
  writeAtomic(file, 'new text');
  assert.equal(readFileSync(file, 'utf8'), 'new text');
  writeAtomic(file, Buffer.from([1, 2, 3]));
  assert.deepEqual([...readFileSync(file)], [1, 2, 3]);
  assert.deepEqual(readdirSync(dir), ['report.md']);
});

test('a write that fails half-way keeps the old file and removes its temp file', (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-write-atomic-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'profile.json');
  writeFileSync(file, '{"old":true}');
  const fullDisk = (temp: string, text: string): void => {
    writeFileSync(temp, text.slice(0, 3));
    throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
  };
  assert.throws(() => writeAtomic(file, '{"new":true}', fullDisk), /ENOSPC/);
  assert.equal(readFileSync(file, 'utf8'), '{"old":true}');
  assert.deepEqual(readdirSync(dir), ['profile.json']);
});
