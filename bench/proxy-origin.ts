// An origin for the metering-proxy benchmark, in its own process so that its
// CPU is not the proxy's: GET /bytes/N answers N bytes. Prints its port.
import http from 'node:http';
import type { AddressInfo } from 'node:net';

const bodies = new Map<number, Buffer>();
const server = http.createServer((req, res) => {
  const size = Number(/^\/bytes\/(\d+)/.exec(req.url ?? '')?.[1] ?? 0);
  let body = bodies.get(size);
  if (!body) {
    body = Buffer.alloc(size, 1);
    bodies.set(size, body);
  }
  res.writeHead(200, { 'content-length': size, 'content-type': 'application/octet-stream' }).end(body);
});
server.keepAliveTimeout = 60_000;
server.listen(0, '127.0.0.1', () => console.log((server.address() as AddressInfo).port));
