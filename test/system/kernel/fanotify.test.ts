import assert from 'node:assert/strict';
import { endianness } from 'node:os';
import { test } from 'node:test';
import { forEachFanotifyEvent } from '../../../src/system/kernel/fanotify.js';

// struct fanotify_event_metadata as the kernel lays it out, with `extra` bytes of information records after it.
function event(mask: number, fd: number, { extra = 0, version = 3 } = {}): Buffer {
  const buffer = Buffer.alloc(24 + extra);
  const le = endianness() === 'LE';
  if (le) buffer.writeUInt32LE(24 + extra, 0);
  else buffer.writeUInt32BE(24 + extra, 0);
  buffer[4] = version;
  if (le) buffer.writeUInt16LE(24, 6);
  else buffer.writeUInt16BE(24, 6);
  if (le) buffer.writeBigUInt64LE(BigInt(mask), 8);
  else buffer.writeBigUInt64BE(BigInt(mask), 8);
  if (le) buffer.writeInt32LE(fd, 16);
  else buffer.writeInt32BE(fd, 16);
  return buffer;
}

test('fanotify events are split by event_len, information records included, with their mask and descriptor', () => {
  const bytes = Buffer.concat([event(0x11, 17), event(0x4000, -1), event(0x10, 23, { extra: 40 }), event(0x1, 5)]);
  const seen: [number, number][] = [];
  const count = forEachFanotifyEvent(bytes, bytes.length, (mask, fd) => seen.push([mask, fd]));
  assert.equal(count, 4);
  assert.deepEqual(seen, [
    [0x11, 17],
    [0x4000, -1],
    [0x10, 23],
    [0x1, 5],
  ]);
});

test('reading stops at a truncated tail, a length shorter than the metadata, or another metadata version', () => {
  const whole = Buffer.concat([event(0x10, 3), event(0x10, 4)]);
  const visits = (bytes: Buffer, length = bytes.length): number[] => {
    const fds: number[] = [];
    forEachFanotifyEvent(bytes, length, (_mask, fd) => fds.push(fd));
    return fds;
  };
  assert.deepEqual(visits(whole, whole.length - 1), [3]);
  const short = event(0x10, 5);
  short.writeUInt32LE(8, 0);
  if (endianness() !== 'LE') short.writeUInt32BE(8, 0);
  assert.deepEqual(visits(Buffer.concat([event(0x10, 3), short, event(0x10, 6)])), [3]);
  assert.deepEqual(visits(Buffer.concat([event(0x10, 3), event(0x10, 7, { version: 4 })])), [3]);
});
