import assert from 'node:assert/strict';
import { endianness } from 'node:os';
import { test } from 'node:test';
import { forEachInotifyEvent } from '../../../src/system/kernel/inotify.js';
import { watchLimitReason } from '../../../src/system/keepers/inotify-events.js';

// struct inotify_event as the kernel lays it out: name NUL-padded to `padded` bytes.
function event(wd: number, mask: number, name: string, padded = 0): Buffer {
  const nameBytes = Buffer.from(name, 'utf8');
  const len = name === '' ? 0 : Math.max(padded, nameBytes.length + 1);
  const buffer = Buffer.alloc(16 + len);
  const le = endianness() === 'LE';
  if (le) {
    buffer.writeInt32LE(wd, 0);
    buffer.writeUInt32LE(mask, 4);
    buffer.writeUInt32LE(len, 12);
  } else {
    buffer.writeInt32BE(wd, 0);
    buffer.writeUInt32BE(mask, 4);
    buffer.writeUInt32BE(len, 12);
  }
  nameBytes.copy(buffer, 16);
  return buffer;
}

test('inotify events are split by their len field and names lose their NUL padding', () => {
  const bytes = Buffer.concat([
    event(1, 0x20, 'n01440764_10026.JPEG', 32),
    event(-1, 0x4000, ''),
    event(7, 0x10, 'é.bin', 16),
  ]);
  const seen: [number, number, string][] = [];
  const count = forEachInotifyEvent(bytes, bytes.length, (wd, mask, name) =>
    seen.push([wd, mask, name.toString('utf8')]),
  );
  assert.equal(count, 3);
  assert.deepEqual(seen, [
    [1, 0x20, 'n01440764_10026.JPEG'],
    [-1, 0x4000, ''],
    [7, 0x10, 'é.bin'],
  ]);
});

test('a truncated tail is not read past the length given', () => {
  const bytes = Buffer.concat([event(1, 0x10, 'a', 16), event(2, 0x10, 'b', 16)]);
  const seen: string[] = [];
  assert.equal(
    forEachInotifyEvent(bytes, bytes.length - 4, (_wd, _mask, name) => seen.push(name.toString('utf8'))),
    1,
  );
  assert.deepEqual(seen, ['a']);
});

test('the watch limit turns the keeper down only when the directories exceed it', () => {
  assert.equal(watchLimitReason(1000, 8192), null);
  assert.equal(watchLimitReason(1000, null), null);
  assert.match(watchLimitReason(9000, 8192) ?? '', /9000 directories.*max_user_watches is 8192.*sysctl/);
});
