// A client for the metering-proxy benchmark, in its own process: GETs
// `count` objects of `size` bytes, `concurrency` at once over kept-alive
// connections, directly or through a proxy in absolute form (as clients that
// honour HTTP_PROXY do). Prints the wall time in ms.
import http from 'node:http';

const [originPort, size, count, concurrency, proxyPort] = process.argv.slice(2).map(Number);
const agent = new http.Agent({ keepAlive: true, maxSockets: concurrency });

function get(): Promise<void> {
  const path = `/bytes/${size}`;
  const options = proxyPort
    ? {
        host: '127.0.0.1',
        port: proxyPort,
        path: `http://127.0.0.1:${originPort}${path}`,
        headers: { host: `127.0.0.1:${originPort}` },
        agent,
      }
    : { host: '127.0.0.1', port: originPort, path, agent };
  return new Promise((resolve, reject) => {
    http
      .get(options, (res) => {
        res.on('data', () => undefined);
        res.on('end', resolve);
      })
      .on('error', reject);
  });
}

const started = performance.now();
let next = 0;
await Promise.all(
  Array.from({ length: concurrency }, async () => {
    while (next++ < count) await get();
  }),
);
console.log((performance.now() - started).toFixed(1));
agent.destroy();
