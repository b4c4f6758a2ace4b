// The demo's object store: the generated dataset's files served over HTTP on loopback (GET and HEAD of /NAME), so `demo
// --remote` needs nothing but node. A stand-in for S3 or a shard server, not a product: no listing, no auth.
import { createReadStream, statSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { basename, join } from 'node:path';

export interface ObjectStore {
  /** http://127.0.0.1:PORT, without a trailing slash. */
  url: string;
  close(): Promise<void>;
}

/** Serves the files of `dir` (by name, no sub-folders) on 127.0.0.1 at a free port. */
export async function startObjectStore(dir: string): Promise<ObjectStore> {
  const server = http.createServer((req, res) => {
    let name: string;
    try {
      name = basename(decodeURIComponent(new URL(req.url ?? '/', 'http://store').pathname));
    } catch {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('malformed path\n');
      return;
    }
    const path = join(dir, name);
    let bytes: number;
    try {
      const stat = statSync(path);
      if (!stat.isFile() || name.startsWith('.')) throw new Error('not an object');
      bytes = stat.size;
    } catch {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such object\n');
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': bytes });
    if (req.method === 'HEAD') res.end();
    else createReadStream(path).pipe(res);
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
