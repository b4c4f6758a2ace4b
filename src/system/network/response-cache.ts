// The profiler's own cache of remote objects, on local disk: in the cached mode of a client with no cache of its own,
// the proxy answers the job's GETs from here, so the origin serves nothing.
import { createHash } from 'node:crypto';
import { createWriteStream, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { Readable } from 'node:stream';

/** A stored response: what the origin answered a plain GET of the object. */
export interface CachedResponse {
  /** Response headers to send again (content type, ETag, last modified...). */
  headers: Record<string, string>;
  /** The body's file. */
  bodyFile: string;
  /** Body bytes. */
  bytes: number;
}

// Headers that describe the stored body; the rest (dates, connection, request ids) are per response.
const KEPT_HEADERS = [
  'content-type',
  'etag',
  'last-modified',
  'cache-control',
  'content-encoding',
  'content-disposition',
];

/** The key of a request for an object: its host and decoded path (clients encode keys differently; queries vary). */
export function objectKey(url: URL): string {
  let path = url.pathname;
  try {
    path = decodeURIComponent(path);
  } catch {
    // A malformed escape stays as sent: it is still one key.
  }
  return `${url.host}${path}`;
}

export class ResponseCache {
  private readonly index = new Map<string, CachedResponse>();

  constructor(private readonly dir: string) {
    mkdirSync(dir, { recursive: true });
  }

  /** The stored response for `key`, or null. */
  get(key: string): CachedResponse | null {
    return this.index.get(key) ?? null;
  }

  /** Stores `body` as the response for `key`, replacing any; a failed fill stores nothing. */
  async put(
    key: string,
    headers: Record<string, string | string[] | undefined>,
    body: Readable | Buffer,
  ): Promise<CachedResponse> {
    const name = createHash('sha1').update(key).digest('hex');
    const bodyFile = join(this.dir, name);
    const partial = `${bodyFile}.partial`;
    try {
      if (Buffer.isBuffer(body)) writeFileSync(partial, body);
      else await pipeline(body, createWriteStream(partial));
    } catch (error) {
      // A body cut short (a stalled endpoint, an interrupt) leaves nothing behind.
      rmSync(partial, { force: true });
      throw error;
    }
    renameSync(partial, bodyFile);
    const kept: Record<string, string> = {};
    for (const name of KEPT_HEADERS) {
      const value = headers[name];
      if (typeof value === 'string') kept[name] = value;
    }
    const entry = { headers: kept, bodyFile, bytes: statSync(bodyFile).size };
    this.index.set(key, entry);
    return entry;
  }

  /** Writes, whole, the index of `keys` the job's hook serves a cached block from; returns the bytes it names. */
  writeIndex(path: string, keys: Iterable<string>): number {
    const objects: Record<string, { file: string; headers: Record<string, string> }> = {};
    let bytes = 0;
    for (const key of keys) {
      const entry = this.index.get(key);
      if (!entry) continue;
      objects[key] = { file: entry.bodyFile, headers: entry.headers };
      bytes += entry.bytes;
    }
    writeFileSync(`${path}.partial`, JSON.stringify({ objects }));
    renameSync(`${path}.partial`, path);
    return bytes;
  }

  /** Removes every stored response and the folder. */
  clear(): void {
    this.index.clear();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
