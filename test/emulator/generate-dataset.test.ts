import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { inflateSync } from 'node:zlib';
import fc from 'fast-check';
import {
  MANIFEST_NAME,
  adler32,
  adler32Combine,
  generateDataset,
  listDatasetFiles,
  sampleName,
} from '../../src/emulator/generate-dataset.js';
import { UserError } from '../../src/errors.js';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'dsa-dataset-'));
}

test('adler32 matches a known value and adler32Combine matches the checksum of the concatenation', () => {
  // RFC 1950 / Wikipedia example.
  assert.equal(adler32(Buffer.from('Wikipedia')), 0x11e60398);
  fc.assert(
    fc.property(fc.uint8Array({ maxLength: 20000 }), fc.uint8Array({ maxLength: 20000 }), (a, b) => {
      const joined = new Uint8Array(a.length + b.length);
      joined.set(a);
      joined.set(b, a.length);
      assert.equal(adler32Combine(adler32(a), adler32(b), b.length), adler32(joined));
    }),
    { numRuns: 200 },
  );
});

test('files are valid zlib streams of about fileBytes, half random, decompressing about 2:1', async () => {
  const dir = tempDir();
  try {
    const fileBytes = 64 * 1024;
    const dataset = await generateDataset(dir, { files: 12, fileBytes, seed: 5 });
    assert.equal(dataset.files, 12);
    assert.equal(dataset.reused, false);
    const names = readdirSync(dir)
      .filter((n) => n.startsWith('sample-'))
      .sort();
    assert.deepEqual(
      names,
      Array.from({ length: 12 }, (_, i) => sampleName(i)),
    );
    assert.equal(names[0], 'sample-00000.bin');
    let total = 0;
    const contents = new Set<string>();
    for (const name of names) {
      const data = readFileSync(join(dir, name));
      total += data.length;
      assert.ok(
        Math.abs(data.length - fileBytes) / fileBytes < 0.1,
        `${name}: ${data.length} bytes, target ${fileBytes}`,
      );
      const raw = inflateSync(data); // throws on a bad stream or checksum
      const ratio = raw.length / data.length;
      assert.ok(ratio > 1.6 && ratio < 2.5, `${name}: ratio ${ratio.toFixed(2)}`);
      contents.add(raw.subarray(0, 4096).toString('hex'));
    }
    assert.equal(dataset.bytes, total);
    assert.equal(contents.size, names.length, 'every file has its own content');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a complete dataset with the same parameters is reused; anything else is regenerated', async () => {
  const dir = tempDir();
  try {
    const options = { files: 6, fileBytes: 8192, seed: 1 };
    const first = await generateDataset(dir, options);
    const mtime = statSync(join(dir, sampleName(0))).mtimeMs;
    const again = await generateDataset(dir, options);
    assert.equal(again.reused, true);
    assert.equal(again.bytes, first.bytes);
    assert.equal(statSync(join(dir, sampleName(0))).mtimeMs, mtime, 'files are not rewritten');

    // Interrupted generation: the manifest is written last, so it is missing.
    unlinkSync(join(dir, MANIFEST_NAME));
    assert.equal((await generateDataset(dir, options)).reused, false);

    // A truncated file makes the dataset incomplete.
    writeFileSync(join(dir, sampleName(3)), 'x');
    const repaired = await generateDataset(dir, options);
    assert.equal(repaired.reused, false);
    assert.equal(repaired.bytes, first.bytes, 'same parameters give the same bytes');

    // Fewer files: samples beyond the new count are removed.
    const smaller = await generateDataset(dir, { ...options, files: 4 });
    assert.equal(smaller.reused, false);
    assert.equal(readdirSync(dir).filter((n) => n.startsWith('sample-')).length, 4);
    assert.equal(listDatasetFiles(dir).length, 4);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('listDatasetFiles lists samples in order, with or without a manifest, and names a missing folder', async () => {
  const dir = tempDir();
  try {
    await generateDataset(dir, { files: 3, fileBytes: 4096 });
    assert.deepEqual(
      listDatasetFiles(dir),
      [0, 1, 2].map((i) => join(dir, sampleName(i))),
    );
    unlinkSync(join(dir, MANIFEST_NAME));
    assert.deepEqual(
      listDatasetFiles(dir),
      [0, 1, 2].map((i) => join(dir, sampleName(i))),
    );
    assert.throws(
      () => listDatasetFiles(join(dir, 'nope')),
      (e: unknown) => e instanceof UserError && /does not exist.*--data/.test(e.message),
    );
    const empty = join(dir, 'empty');
    mkdirSync(empty);
    assert.throws(
      () => listDatasetFiles(empty),
      (e: unknown) => e instanceof UserError && /no sample-NNNNN.bin/.test(e.message),
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
