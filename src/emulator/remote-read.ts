// The emulated job's reads of remote samples (job.ts --remote-base): a GET of each sample's URL, sent to the proxy in
// HTTP_PROXY when one is set, as clients that honour the variable do (requests, boto3, curl), so the profiler's
// metering proxy sees every request. Kept-alive connections, one request at a time per connection, as a loader worker's
// client would.
import http from 'node:http';
import { lostToKeepAlive } from '../system/network/kept-alive-race.js';

const agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

/** Whether `path` names a remote sample. */
export function isRemote(path: string): boolean {
  return path.startsWith('http://');
}

/**
 * The body of `url`; an error naming the URL and the status when it is not 200. A request lost to the server's
 * keep-alive timeout is sent once more on a new connection (kept-alive-race.ts), as Python's clients do.
 */
export function fetchSample(url: string, env: NodeJS.ProcessEnv = process.env, retry = false): Promise<Buffer> {
  const target = new URL(url);
  const proxy = env.HTTP_PROXY ?? env.http_proxy;
  const via = proxy ? new URL(proxy) : null;
  // A retry takes a new connection, not another kept-alive one the server may have closed too.
  const through = retry ? false : agent;
  const options: http.RequestOptions = via
    ? { host: via.hostname, port: via.port || 80, path: url, headers: { host: target.host }, agent: through }
    : { host: target.hostname, port: target.port || 80, path: `${target.pathname}${target.search}`, agent: through };
  return new Promise((resolve, reject) => {
    const req = http.get(options, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        res.statusCode === 200
          ? resolve(Buffer.concat(chunks))
          : reject(new Error(`GET ${url}: HTTP ${res.statusCode}`)),
      );
      res.on('error', reject);
    });
    req.on('error', (error: NodeJS.ErrnoException) => {
      if (!retry && lostToKeepAlive(req, error)) resolve(fetchSample(url, env, true));
      else reject(new Error(`GET ${url}: ${error.code ?? error.message}`));
    });
  });
}
