import assert from 'node:assert/strict';
import { test } from 'node:test';
import { BUCKETS_PER_OCTAVE, sizeHistogram } from '../../src/analysis/size-histogram.js';

test('the size histogram keeps every file and byte, each bucket holding its files between its edges', () => {
  const sizes = [0, 1, 10, 10, 100, 1000, 1000, 1000, 65536, 1e9];
  const hist = sizeHistogram(sizes);
  assert.equal(hist.bucketsPerOctave, BUCKETS_PER_OCTAVE);
  assert.equal(
    hist.buckets.reduce((a, b) => a + b.files, 0),
    sizes.length,
  );
  assert.equal(
    hist.buckets.reduce((a, b) => a + b.bytes, 0),
    sizes.reduce((a, b) => a + b, 0),
  );
  for (const b of hist.buckets)
    assert.ok(b.lowBytes <= b.bytes / b.files && b.bytes / b.files < b.highBytes, JSON.stringify(b));
  for (let i = 1; i < hist.buckets.length; i++)
    assert.ok(hist.buckets[i - 1].highBytes <= hist.buckets[i].lowBytes, 'ascending, not overlapping');
  // 0 bytes has a bucket of its own; the three 1000-byte files share one.
  assert.deepEqual(hist.buckets[0], { lowBytes: 0, highBytes: 1, files: 1, bytes: 0 });
  assert.equal(hist.buckets.find((b) => b.lowBytes <= 1000 && 1000 < b.highBytes)?.files, 3);
});
