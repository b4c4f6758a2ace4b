// Servers on loopback that misbehave as a stopped or cut-off endpoint does, for the tests of the network deadlines:
// real sockets, no mock of the network.
import assert from 'node:assert/strict';
import http from 'node:http';
import net from 'node:net';
import type { NetDeadlines } from '../../src/system/network/deadlines.js';

/** Short deadlines, so a stall is seen in a test's time. */
export const SHORT: NetDeadlines = { answerMs: 400, idleMs: 400 };
/** A generous bound on what a 400 ms deadline takes (a loaded machine): a behaviour, not a benchmark. */
export const BOUND_MS = 5000;

/** A TCP server that accepts every connection and swallows what it is sent: an endpoint that never answers. */
export async function startSilent(): Promise<{ port: number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('data', () => undefined);
    socket.on('error', () => undefined);
    socket.on('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An HTTP server that answers HEAD whole and GET with its headers and `sentBytes` of a `bytes` body, then nothing
 * more: a body that stalls. Counts the GETs' sockets still open.
 */
export async function startStalling(
  bytes: number,
  sentBytes: number,
): Promise<{ port: number; open: () => number; close: () => Promise<void> }> {
  const sockets = new Set<net.Socket>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': bytes, 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') return void res.end();
    sockets.add(req.socket);
    req.socket.on('close', () => sockets.delete(req.socket));
    res.write(Buffer.alloc(sentBytes, 1));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    open: () => sockets.size,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * An HTTP server that answers each connection's first request whole (HEAD, or GET with the body 'abc') and hands its
 * later ones to `later`: a kept-alive connection the server closes or breaks. Counts the GETs it received.
 */
export async function startKeptAliveBreaker(
  later: (req: http.IncomingMessage, res: http.ServerResponse) => void,
): Promise<{ port: number; gets: () => number; close: () => Promise<void> }> {
  const served = new WeakMap<object, number>();
  let gets = 0;
  const server = http.createServer((req, res) => {
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (req.method === 'GET') gets++;
    if (count > 1) return later(req, res);
    res.writeHead(200, { 'content-length': 3 }).end(req.method === 'HEAD' ? undefined : 'abc');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as net.AddressInfo).port,
    gets: () => gets,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits up to 3 s for `holds`. */
export async function waitFor(holds: () => boolean, what: string): Promise<void> {
  for (let k = 0; k < 60 && !holds(); k++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.ok(holds(), what);
}
