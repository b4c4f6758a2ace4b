import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import type { Profile } from '../../src/schema/profile.js';
import { storageProbe, type ReadProber } from '../../src/profile/storage-probe.js';

const stored = JSON.parse(
  readFileSync(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url), 'utf8'),
) as Profile;
const files = Array.from({ length: 100 }, (_, k) => ({ path: `/data/f${k}`, bytes: 4 << 20 }));

/** A prober that records what it was asked and answers as storage that delivered `share` of the bytes. */
function fakeProber(share: number | null): {
  prober: ReadProber;
  asked: { files: number; concurrency: number; maxBytes: number }[];
} {
  const asked: { files: number; concurrency: number; maxBytes: number }[] = [];
  const prober: ReadProber = async (picked, limits) => {
    asked.push({ files: picked.length, concurrency: limits.concurrency, maxBytes: limits.maxBytes });
    const bytesRead = 64 << 20;
    const storageBytes = share === null ? null : share * bytesRead;
    return {
      bytesRead,
      storageBytes,
      files: 16,
      sec: 0.5,
      bytesPerSec: (storageBytes ?? bytesRead) / 0.5,
      concurrency: limits.concurrency,
      requestBytes: limits.requestBytes,
    };
  };
  return { prober, asked };
}

const unthrottled = (): Profile => ({
  ...structuredClone(stored),
  options: { ...stored.options, storageBwBytesPerSec: null },
});

test("the storage probe reads a bounded sample of the dataset at the loader workers' concurrency, and proves it was cold", async () => {
  const { prober, asked } = fakeProber(1);
  const probe = await storageProbe(unthrottled(), files, prober);
  assert.ok(probe);
  assert.equal(probe.proven, true);
  assert.equal(probe.bytesPerSec, (64 << 20) / 0.5);
  assert.match(probe.reason, /storage delivered 100\.0% of the 64\.0 MiB read from 16 evicted files/);
  // The emulated job's 2 workers; 256 MiB of 4 MiB files: 64 picked.
  assert.deepEqual(asked, [{ files: 64, concurrency: 2, maxBytes: 256 << 20 }]);
});

test('a probe whose reads came from the page cache is not proven, and says so', async () => {
  const probe = await storageProbe(unthrottled(), files, fakeProber(0.5).prober);
  assert.equal(probe?.proven, false);
  assert.match(probe!.reason, /^not proven: storage delivered only 50\.0% .* the rest came from the page cache/);
  const blind = await storageProbe(unthrottled(), files, fakeProber(null).prober);
  assert.equal(blind?.proven, false);
  assert.match(blind!.reason, /read_bytes could not be read/);
});

test('no probe under a throttle (its rate is the bandwidth) or without a cold mode', async () => {
  const { prober, asked } = fakeProber(1);
  assert.equal(await storageProbe(stored, files, prober), null);
  const noCold = unthrottled();
  delete noCold.modes.cold;
  assert.equal(await storageProbe(noCold, files, prober), null);
  assert.equal(asked.length, 0);
});
