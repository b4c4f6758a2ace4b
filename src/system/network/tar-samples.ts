// Samples in a WebDataset-style tar shard: its members grouped by key (the path up to the first dot of the file name:
// 000123.jpg and 000123.cls are one sample). Read from the stream's 512-byte headers, skipping the data.
import type { Readable } from 'node:stream';

const BLOCK = 512;

/** What a count of a tar stream's samples found. */
export interface TarSamples {
  /** Sample keys seen. */
  samples: number;
  /** Bytes of the stream those samples span (up to the last whole sample where the count stopped at its limit). */
  bytesRead: number;
  /** Whether the stream was read to its end. */
  complete: boolean;
}

/** The sample keys of a tar stream, counted as its headers go by, reading at most `maxBytes`. */
export async function countTarSamples(stream: Readable, maxBytes = Infinity): Promise<TarSamples> {
  const keys = new Set<string>();
  let bytesRead = 0;
  // Stream offset of `pending`'s first byte, and of the latest key's first header (where the samples before it end).
  let pendingAt = 0;
  let latestKeyAt = 0;
  let pending: Buffer = Buffer.alloc(0);
  // Bytes of member data (padded to whole blocks) still to skip before the next header.
  let skip = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytesRead += chunk.length;
    pending = pending.length === 0 ? chunk : Buffer.concat([pending, chunk]);
    let at = 0;
    while (true) {
      if (skip > 0) {
        const skipped = Math.min(skip, pending.length - at);
        at += skipped;
        skip -= skipped;
        if (skip > 0) break;
      }
      if (pending.length - at < BLOCK) break;
      const header = pending.subarray(at, at + BLOCK);
      const headerAt = pendingAt + at;
      at += BLOCK;
      if (header.every((b) => b === 0)) continue;
      const name = cString(header, 0, 100);
      const prefix = cString(header, 345, 155);
      const size = parseInt(cString(header, 124, 12).trim() || '0', 8);
      const type = String.fromCharCode(header[156] || 48);
      skip = Math.ceil(size / BLOCK) * BLOCK;
      if (type !== '0' && type !== '\0') continue;
      const path = prefix ? `${prefix}/${name}` : name;
      const slash = path.lastIndexOf('/');
      const dot = path.indexOf('.', slash + 1);
      const key = dot < 0 ? path : path.slice(0, dot);
      if (!keys.has(key)) {
        keys.add(key);
        latestKeyAt = headerAt;
      }
    }
    pending = pending.subarray(at);
    pendingAt += at;
    if (bytesRead >= maxBytes) {
      stream.destroy();
      // The latest key may be cut short: count the samples before it, over the bytes they span.
      return { samples: Math.max(0, keys.size - 1), bytesRead: latestKeyAt, complete: false };
    }
  }
  return { samples: keys.size, bytesRead, complete: true };
}

function cString(block: Buffer, start: number, length: number): string {
  const field = block.subarray(start, start + length);
  const end = field.indexOf(0);
  return field.subarray(0, end < 0 ? field.length : end).toString('utf8');
}
