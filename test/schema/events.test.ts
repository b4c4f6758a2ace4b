import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventSchema, MAX_HOSTNAME_CHARS } from '../../src/schema/events.js';

const OLD_START = { v: 1, type: 'start', t: 1, rank: 2, pid: 7, worldSize: 4, mode: 'cold', workers: 2 };

test('a start event without a node (older hooks and writers) still parses: node 0, host not named', () => {
  const parsed = EventSchema.parse(OLD_START);
  assert.ok(parsed.type === 'start');
  if (parsed.type !== 'start') return;
  assert.equal(parsed.nodeRank, 0);
  assert.equal(parsed.hostname, undefined);
  assert.equal(parsed.rank, 2);
});

test('a start event carries its node: host name and node rank', () => {
  const parsed = EventSchema.parse({ ...OLD_START, hostname: 'gpu-b.cluster', nodeRank: 1 });
  assert.ok(parsed.type === 'start');
  if (parsed.type === 'start') assert.deepEqual([parsed.hostname, parsed.nodeRank], ['gpu-b.cluster', 1]);
});

test('a start event with a malformed node is a bad line', () => {
  for (const bad of [
    { nodeRank: -1 },
    { nodeRank: 1.5 },
    { nodeRank: '1' },
    { hostname: 7 },
    { hostname: 'h'.repeat(MAX_HOSTNAME_CHARS + 1) },
  ]) {
    assert.equal(EventSchema.safeParse({ ...OLD_START, ...bad }).success, false, JSON.stringify(bad).slice(0, 60));
  }
  assert.equal(EventSchema.safeParse({ ...OLD_START, hostname: 'h'.repeat(MAX_HOSTNAME_CHARS) }).success, true);
});
