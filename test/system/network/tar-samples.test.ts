import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Readable } from 'node:stream';
import { countTarSamples } from '../../../src/system/network/tar-samples.js';

/** A tar member: a ustar header (name, octal size, type) and its data padded to whole blocks. */
function member(name: string, data: Buffer, type = '0'): Buffer {
  const header = Buffer.alloc(512);
  header.write(name, 0, 'utf8');
  header.write(data.length.toString(8).padStart(11, '0'), 124, 'ascii');
  header.write(type, 156, 'ascii');
  header.write('ustar', 257, 'ascii');
  return Buffer.concat([header, data, Buffer.alloc((512 - (data.length % 512)) % 512)]);
}

/** A WebDataset shard of `n` samples, KEY.bin and KEY.cls each, in a folder entry's company. */
function shard(n: number, sampleBytes: number): Buffer {
  const parts = [member('train/', Buffer.alloc(0), '5')];
  for (let k = 0; k < n; k++)
    parts.push(
      member(`train/${String(k).padStart(6, '0')}.bin`, Buffer.alloc(sampleBytes, k)),
      member(`train/${String(k).padStart(6, '0')}.cls`, Buffer.from(String(k % 10))),
    );
  return Buffer.concat([...parts, Buffer.alloc(1024)]);
}

/** The stream in chunks that cut headers and data anywhere. */
const chunked = (bytes: Buffer, size: number) =>
  Readable.from(
    Array.from({ length: Math.ceil(bytes.length / size) }, (_, k) => bytes.subarray(k * size, (k + 1) * size)),
  );

test('counts the samples of a tar shard by key, whatever the chunking, skipping folders', async () => {
  const bytes = shard(7, 1000);
  for (const size of [100, 512, 777, bytes.length]) {
    assert.deepEqual(
      await countTarSamples(chunked(bytes, size)),
      { samples: 7, bytesRead: bytes.length, complete: true },
      `chunks of ${size}`,
    );
  }
});

test('stops at its byte limit and says how far it read, for the caller to scale', async () => {
  const bytes = shard(40, 4096);
  const counted = await countTarSamples(chunked(bytes, 8192), 50_000);
  assert.equal(counted.complete, false);
  assert.ok(counted.bytesRead > 0 && counted.bytesRead < bytes.length, `spans ${counted.bytesRead} bytes`);
  // About one sample per 5,120 bytes (4,096 of data and 1,024 of two headers and a padded label).
  const scaled = (counted.samples * bytes.length) / counted.bytesRead;
  assert.ok(Math.abs(scaled - 40) <= 2, `scaled estimate ${scaled}`);
});
