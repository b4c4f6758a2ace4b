import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { EvictionPolicy, IDLE_SWEEPS } from '../../../src/system/keepers/eviction-policy.js';

describe('eviction policy', () => {
  it('a cold keeper (cap 0) evicts every closed file, but not one read again before the evictions', () => {
    const policy = new EvictionPolicy<string>(0);
    policy.closed('a', 10);
    policy.closed('b', 10);
    policy.startReading('b', { idleSweeps: 0 });
    assert.deepEqual(policy.evictions(), ['a']);
    assert.equal(policy.readingCount, 1);
    policy.closed('b', 10);
    assert.equal(policy.readingCount, 0);
    assert.deepEqual(policy.evictions(), ['b']);
  });

  it('a cap evicts the least recently closed files while the LRU and the measured open files exceed it', () => {
    const policy = new EvictionPolicy<string>(30);
    for (const name of ['a', 'b', 'c']) policy.closed(name, 10);
    assert.deepEqual(policy.evictions(), []);
    policy.startReading('d', { idleSweeps: 0 });
    // d holds 15 bytes: the LRU may keep 15 of its 30, so a and b go.
    assert.equal(
      policy.measureReading(() => 15),
      false,
    );
    assert.deepEqual(policy.evictions(), ['a', 'b']);
    assert.equal(policy.heldBytes(), 25);
    assert.deepEqual(policy.heldFiles().sort(), ['c', 'd']);
    assert.equal(policy.keeps('c'), true);
    assert.equal(policy.keeps('a'), false);
  });

  it('a file held open that stops moving enters the LRU at its resident bytes after IDLE_SWEEPS measurements', () => {
    const policy = new EvictionPolicy<string>(100);
    policy.startReading('f', { idleSweeps: 0 });
    policy.measureReading(() => 40);
    for (let sweep = 1; sweep < IDLE_SWEEPS; sweep++) policy.measureReading(() => 40);
    assert.equal(policy.readingCount, 1);
    policy.measureReading(() => 40);
    assert.equal(policy.readingCount, 0);
    assert.equal(policy.keeps('f'), true);
    assert.equal(policy.heldBytes(), 40);
  });

  it('files held open alone over the cap must be swept', () => {
    const policy = new EvictionPolicy<string>(10);
    policy.startReading('f', { idleSweeps: 0 });
    assert.equal(
      policy.measureReading(() => 11),
      true,
    );
    policy.measuredOverCap();
    assert.equal(policy.heldBytes(), 0);
  });

  it('sweeps: an active file stays, an idle one leaves after IDLE_SWEEPS sweeps with its pages forgotten', () => {
    const policy = new EvictionPolicy<string>(0);
    policy.startReading('busy', { idleSweeps: 0 });
    policy.startReading('idle', { idleSweeps: 0 });
    policy.setPreviousPages('idle', new Uint8Array([1]));
    const left: string[] = [];
    for (let sweep = 0; sweep < IDLE_SWEEPS; sweep++)
      policy.sweepReading(
        (file) => file === 'busy',
        (file) => left.push(file),
      );
    assert.deepEqual(left, ['idle']);
    assert.equal(policy.readingCount, 1);
    assert.equal(policy.previousPages('idle'), undefined);
  });

  it('after lost events the files being read are forgotten, with their pages; the LRU stays', () => {
    const policy = new EvictionPolicy<string, { idleSweeps: number; fd: number }>(100);
    policy.closed('kept', 10);
    policy.startReading('r', { idleSweeps: 0, fd: 7 });
    policy.setPreviousPages('r', new Uint8Array([1]));
    assert.deepEqual(
      policy.forgetReading().map((state) => state.fd),
      [7],
    );
    assert.equal(policy.readingCount, 0);
    assert.equal(policy.previousPages('r'), undefined);
    assert.equal(policy.keeps('kept'), true);
  });
});
