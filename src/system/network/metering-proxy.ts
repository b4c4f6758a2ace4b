// A forward HTTP proxy on loopback (HTTP_PROXY, HTTPS_PROXY) that meters, caps and in the cached mode answers a job's
// remote reads: plain requests seen whole, HTTPS tunnels counted and capped unread, one token bucket, and a 504 for an
// origin that stalls.
import { createReadStream } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import { pipeline, type Readable, type Writable } from 'node:stream';
import { netDeadlines, StallError, type NetDeadlines } from './deadlines.js';
import { lostToKeepAlive } from './kept-alive-race.js';
import { TokenBucket } from './token-bucket.js';
import { objectKey, type CachedResponse, type ResponseCache } from './response-cache.js';

/** Whether the proxy answers GETs it has stored ('serve', the cached mode) or sends every request on ('pass'). */
export type CacheUse = 'pass' | 'serve';

export interface ProxyOptions {
  /** Port on 127.0.0.1; 0 picks a free one. */
  port: number;
  /** The data's origins as host:port; other traffic is counted apart (a model download, telemetry). */
  dataOrigins: readonly string[];
  /** Byte-rate cap on the data's bytes from the origin; null for none. */
  bytesPerSec: number | null;
  /** Stored objects, answered in 'serve' use. */
  cache: ResponseCache | null;
  cacheUse: CacheUse;
  /** How long an origin may leave a request unanswered or a body stalled; default netDeadlines(). */
  deadlines?: NetDeadlines;
}

/** One request for the data, or one tunnel to its origin. */
export interface RequestRecord {
  /** ms from arrival to the first byte of the response (null: none came). */
  firstByteMs: number | null;
  /** ms from arrival to the end of the response. */
  totalMs: number;
  /** HTTP status; 0 for a tunnel or a failed connection. */
  status: number;
  /** Answered from the profiler's cache. */
  fromCache: boolean;
}

/** Cumulative counters since the proxy started. */
export interface ProxyCounters {
  /** Bytes of the data the origin sent (through requests and tunnels). */
  originBytes: number;
  /** Bytes of the data answered from the profiler's cache. */
  cacheBytes: number;
  /** Bytes other hosts sent (a model download, telemetry); what the job sends is not counted. */
  otherBytes: number;
  /** Requests for the data seen whole (plain HTTP). */
  requests: number;
  /** Of them, answered from the cache. */
  cacheHits: number;
  /** CONNECT tunnels to the data's origins. */
  tunnels: number;
  /** Responses of the data by status class, e.g. { '200': 10, '404': 1 }. */
  statuses: Record<string, number>;
  /** Connections to the origin that failed, and the last failure. */
  failures: number;
  lastFailure: string | null;
  /** Requests (or tunnels) of the data open now, and the most at once. */
  inFlight: number;
  maxInFlight: number;
  /** Integral of requests in flight over time, request-seconds (its rise over a window / the window: mean in flight). */
  inFlightSec: number;
}

// Hop-by-hop headers: meant for the proxy, never forwarded.
const HOP_BY_HOP = [
  'connection',
  'proxy-connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-authenticate',
  'te',
  'trailer',
  'upgrade',
];

export class MeteringProxy {
  private readonly counters: ProxyCounters = {
    originBytes: 0,
    cacheBytes: 0,
    otherBytes: 0,
    requests: 0,
    cacheHits: 0,
    tunnels: 0,
    statuses: {},
    failures: 0,
    lastFailure: null,
    inFlight: 0,
    maxInFlight: 0,
    inFlightSec: 0,
  };
  private readonly records: RequestRecord[] = [];
  private inFlightSince = performance.now();
  private bucket: TokenBucket | null;
  private addedLatencyMs = 0;
  private cacheUse: CacheUse;
  /** In 'serve' use, the keys that may be answered (a held share); null: every stored one. */
  private servedKeys: ReadonlySet<string> | null = null;
  private readonly sockets = new Set<net.Socket>();
  private readonly agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
  private readonly deadlines: NetDeadlines;

  private constructor(
    private readonly server: http.Server,
    private readonly options: ProxyOptions,
  ) {
    this.bucket = options.bytesPerSec ? new TokenBucket(options.bytesPerSec) : null;
    this.cacheUse = options.cacheUse;
    this.deadlines = options.deadlines ?? netDeadlines();
  }

  /** Starts the proxy on 127.0.0.1; rejects with the listen error (EADDRINUSE when the port is taken). */
  static async start(options: ProxyOptions): Promise<MeteringProxy> {
    const server = http.createServer();
    const proxy = new MeteringProxy(server, options);
    server.on('request', (req, res) => proxy.onRequest(req, res));
    server.on('connect', (req, socket: net.Socket, head) => proxy.onConnect(req, socket, head));
    server.on('connection', (socket: net.Socket) => {
      proxy.sockets.add(socket);
      socket.on('close', () => proxy.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return proxy;
  }

  /** The proxy's URL, for HTTP_PROXY and HTTPS_PROXY. */
  get url(): string {
    const address = this.server.address() as net.AddressInfo;
    return `http://127.0.0.1:${address.port}`;
  }

  /** A copy of the counters now. */
  readCounters(): ProxyCounters {
    this.accrueInFlight();
    return { ...this.counters, statuses: { ...this.counters.statuses } };
  }

  /** The data's requests and tunnels that ended since the last call, handed over and forgotten. */
  takeRecords(): RequestRecord[] {
    return this.records.splice(0, this.records.length);
  }

  /** Delays each request for the data that goes to the origin by `ms` (validate's latency points); 0: none. */
  setAddedLatencyMs(ms: number): void {
    this.addedLatencyMs = Math.max(0, ms);
  }

  /** Changes the cap (null: none) for the requests that start from now. */
  setBytesPerSec(bytesPerSec: number | null): void {
    this.bucket = bytesPerSec ? new TokenBucket(bytesPerSec) : null;
  }

  /** The cap on the data's bytes now, bytes/s, or null. */
  get capBytesPerSec(): number | null {
    return this.bucket?.bytesPerSec ?? null;
  }

  /** Whether the proxy only passes requests on now (no cap, latency or cache): a run may reach the origin without it. */
  get passesThrough(): boolean {
    return this.bucket === null && this.addedLatencyMs === 0 && this.cacheUse === 'pass';
  }

  /** Whether stored objects are answered from now on; `only` limits the answers to those keys (null: all). */
  setCacheUse(use: CacheUse, only: ReadonlySet<string> | null = null): void {
    this.cacheUse = use;
    this.servedKeys = only;
  }

  /** Starts counting the most requests in flight at once afresh (one run's). */
  resetMaxInFlight(): void {
    this.counters.maxInFlight = this.counters.inFlight;
  }

  /** Stops listening and cuts every connection still open. */
  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.agent.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }

  private isData(hostPort: string): boolean {
    return this.options.dataOrigins.includes(hostPort);
  }

  private failed(origin: string, error: NodeJS.ErrnoException): void {
    this.counters.failures += 1;
    this.counters.lastFailure = `${origin}: ${error.code ?? error.message}`;
  }

  private accrueInFlight(): void {
    const now = performance.now();
    this.counters.inFlightSec += (this.counters.inFlight * (now - this.inFlightSince)) / 1000;
    this.inFlightSince = now;
  }

  private opened(): void {
    this.accrueInFlight();
    this.counters.inFlight += 1;
    this.counters.maxInFlight = Math.max(this.counters.maxInFlight, this.counters.inFlight);
  }

  private closed(record: RequestRecord): void {
    this.accrueInFlight();
    this.counters.inFlight -= 1;
    this.records.push(record);
    const status = String(record.status);
    if (record.status > 0) this.counters.statuses[status] = (this.counters.statuses[status] ?? 0) + 1;
  }

  /** A plain HTTP request in absolute form (GET http://host/path). */
  private onRequest(req: http.IncomingMessage, res: http.ServerResponse): void {
    let target: URL;
    try {
      target = new URL(req.url ?? '');
    } catch {
      res
        .writeHead(400, { 'content-type': 'text/plain' })
        .end('ds-analyzer metering proxy: only absolute-form requests (through HTTP_PROXY) are served\n');
      return;
    }
    const hostPort = `${target.hostname}:${target.port || (target.protocol === 'https:' ? 443 : 80)}`;
    if (!this.isData(hostPort)) {
      this.forward(req, res, target, null);
      return;
    }
    const started = performance.now();
    this.counters.requests += 1;
    this.opened();
    const record: RequestRecord = { firstByteMs: null, totalMs: 0, status: 0, fromCache: false };
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      record.totalMs = performance.now() - started;
      this.closed(record);
    };
    res.on('close', finish);
    const stored = this.storedAnswer(req, target);
    if (stored) {
      record.fromCache = true;
      this.counters.cacheHits += 1;
      this.serveStored(req, res, stored, record, started);
      return;
    }
    // A farther store: the request waits before it leaves, so its first byte comes that much later.
    if (this.addedLatencyMs > 0)
      setTimeout(() => this.forward(req, res, target, { record, started }), this.addedLatencyMs);
    else this.forward(req, res, target, { record, started });
  }

  /** The stored response for a GET or HEAD in 'serve' use, or null. */
  private storedAnswer(req: http.IncomingMessage, target: URL): CachedResponse | null {
    if (this.cacheUse !== 'serve' || !this.options.cache || (req.method !== 'GET' && req.method !== 'HEAD'))
      return null;
    const key = objectKey(target);
    return this.servedKeys && !this.servedKeys.has(key) ? null : this.options.cache.get(key);
  }

  /** Answers from the cache, with a single byte range where one is asked (S3 clients read parts). */
  private serveStored(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    stored: CachedResponse,
    record: RequestRecord,
    started: number,
  ): void {
    const range = parseRange(req.headers.range, stored.bytes);
    const headers: Record<string, string> = { ...stored.headers, 'accept-ranges': 'bytes' };
    let status = 200;
    let start = 0;
    let end = stored.bytes - 1;
    if (range === 'unsatisfiable') {
      res.writeHead(416, { 'content-range': `bytes */${stored.bytes}` }).end();
      record.status = 416;
      return;
    }
    if (range) {
      status = 206;
      ({ start, end } = range);
      headers['content-range'] = `bytes ${start}-${end}/${stored.bytes}`;
    }
    headers['content-length'] = String(Math.max(0, end - start + 1));
    record.status = status;
    res.writeHead(status, headers);
    record.firstByteMs = performance.now() - started;
    if (req.method === 'HEAD' || end < start) {
      res.end();
      return;
    }
    this.relay(
      createReadStream(stored.bodyFile, { start, end, highWaterMark: 256 * 1024 }),
      res,
      record,
      'cacheBytes',
      null,
    );
  }

  /**
   * Sends the request on to its origin and the response back, metered (and capped) when it is the data's. A GET or HEAD
   * lost to the origin's keep-alive timeout is sent once more on a new connection (`retry`, kept-alive-race.ts): the
   * job never sees that race.
   */
  private forward(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    target: URL,
    data: { record: RequestRecord; started: number } | null,
    retry = false,
  ): void {
    const headers = { ...req.headers };
    for (const name of HOP_BY_HOP) delete headers[name];
    // The origin's answer, then each chunk of its body, must come before a deadline: a stalled origin is cut.
    let deadline = setTimeout(
      () => upstream.destroy(new StallError('answer', this.deadlines.answerMs)),
      this.deadlines.answerMs,
    );
    const upstream = http.request(
      {
        host: target.hostname,
        port: target.port || 80,
        method: req.method,
        path: `${target.pathname}${target.search}`,
        headers,
        agent: retry ? false : this.agent,
      },
      (response) => {
        clearTimeout(deadline);
        // A response the cap or the job holds back (paused) waits on them, not on the origin.
        deadline = setTimeout(
          () =>
            response.isPaused() ? deadline.refresh() : upstream.destroy(new StallError('body', this.deadlines.idleMs)),
          this.deadlines.idleMs,
        );
        response.once('close', () => clearTimeout(deadline));
        const responseHeaders = { ...response.headers };
        for (const name of HOP_BY_HOP) delete responseHeaders[name];
        res.writeHead(response.statusCode ?? 502, responseHeaders);
        if (data) {
          data.record.status = response.statusCode ?? 0;
          data.record.firstByteMs = performance.now() - data.started;
        }
        if (data) this.relay(response, res, data.record, 'originBytes', this.bucket, undefined, deadline);
        else this.relay(response, res, null, 'otherBytes', null, undefined, deadline);
      },
    );
    // The job gone before its answer (killed as hung, its client timed out): its request to the origin goes too. Left
    // waiting on a frozen origin, it held the CLI's exit for the whole answer deadline.
    let abandoned = false;
    res.once('close', () => {
      if (res.headersSent) return; // relay() ends a body the job stopped reading
      abandoned = true;
      clearTimeout(deadline);
      upstream.destroy();
    });
    upstream.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(deadline);
      if (abandoned) return; // not the origin's failure
      const safe = req.method === 'GET' || req.method === 'HEAD';
      if (safe && !retry && lostToKeepAlive(upstream, error) && !res.headersSent)
        return this.forward(req, res, target, data, true);
      if (data) this.failed(target.host, error);
      // A body cut short is not a whole response: the job's client sees the connection end.
      if (res.headersSent) res.destroy();
      else res.writeHead(error instanceof StallError ? 504 : 502, { 'content-type': 'text/plain' }).end();
    });
    // A GET or HEAD has no body to send again: the retry only ends its request.
    if (retry) upstream.end();
    else pipeline(req, upstream, () => undefined);
  }

  /** A CONNECT tunnel (HTTPS): its bytes from the origin are counted and capped without decrypting them. */
  private onConnect(req: http.IncomingMessage, client: net.Socket, head: Buffer): void {
    const [host, portText] = (req.url ?? '').split(':');
    const port = Number(portText) || 443;
    const data = this.isData(`${host}:${port}`);
    const started = performance.now();
    const record: RequestRecord = { firstByteMs: null, totalMs: 0, status: 0, fromCache: false };
    if (data) {
      this.counters.tunnels += 1;
      this.opened();
    }
    const origin = net.connect(port, host, () => {
      // Connected: a tunnel may then idle as long as its client keeps it (a pooled TLS connection), so no deadline.
      clearTimeout(deadline);
      client.write('HTTP/1.1 200 Connection Established\r\n\r\n');
      if (head.length > 0) origin.write(head);
      if (data) this.relay(origin, client, record, 'originBytes', this.bucket, started);
      else this.relay(origin, client, null, 'otherBytes', null);
      client.pipe(origin);
    });
    const deadline = setTimeout(
      () => origin.destroy(new StallError('answer', this.deadlines.answerMs)),
      this.deadlines.answerMs,
    );
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      clearTimeout(deadline);
      client.destroy();
      origin.destroy();
      if (!data) return;
      record.totalMs = performance.now() - started;
      this.closed(record);
    };
    origin.on('error', (error) => {
      if (data) this.failed(`${host}:${port}`, error);
      if (!client.destroyed) client.end('HTTP/1.1 502 Bad Gateway\r\n\r\n');
      finish();
    });
    // The origin's end reaches the client through relay(); the tunnel ends with the client.
    client.on('error', finish);
    client.on('close', finish);
  }

  /** Relays `source` to `sink`, counted and capped, with plain listeners: a Transform costs CPU per chunk. */
  private relay(
    source: Readable,
    sink: Writable,
    record: RequestRecord | null,
    counter: 'originBytes' | 'cacheBytes' | 'otherBytes',
    bucket: TokenBucket | null,
    /** performance.now() at the record's start, where its first byte is timed here (a tunnel's). */
    started?: number,
    /** The source's idle deadline, pushed back by each chunk here: no second listener on every byte's path. */
    idle?: NodeJS.Timeout,
  ): void {
    const counters = this.counters;
    // A paused source still ends once its buffer is empty: the sink ends after the last held chunk.
    let held = 0;
    let ended = false;
    source.on('data', (chunk: Buffer) => {
      idle?.refresh();
      counters[counter] += chunk.length;
      if (record && record.firstByteMs === null && started !== undefined)
        record.firstByteMs = performance.now() - started;
      const waitMs = bucket ? bucket.take(chunk.length) : 0;
      if (waitMs > 0) {
        // Held back until the cap allows it: the bytes leave no sooner than the rate says.
        source.pause();
        held += 1;
        setTimeout(() => send(chunk), waitMs);
      } else if (!sink.write(chunk)) {
        source.pause();
        sink.once('drain', () => source.resume());
      }
    });
    const send = (chunk: Buffer) => {
      held -= 1;
      const drained = sink.write(chunk);
      if (ended && held === 0) sink.end();
      else if (drained) source.resume();
      else sink.once('drain', () => source.resume());
    };
    source.once('end', () => {
      ended = true;
      if (held === 0) sink.end();
    });
    source.once('error', () => sink.destroy());
    sink.once('error', () => source.destroy());
    sink.once('close', () => source.destroy());
  }
}

/** A single byte range of a `bytes=` Range header, clamped to the body; null: none or not handled (send it whole). */
export function parseRange(
  header: string | undefined,
  size: number,
): { start: number; end: number } | 'unsatisfiable' | null {
  const match = header?.match(/^bytes=(\d*)-(\d*)$/);
  if (!match || (match[1] === '' && match[2] === '')) return null;
  if (match[1] === '') {
    const suffix = Number(match[2]);
    return suffix === 0 ? 'unsatisfiable' : { start: Math.max(0, size - suffix), end: size - 1 };
  }
  const start = Number(match[1]);
  if (start >= size) return 'unsatisfiable';
  const end = match[2] === '' ? size - 1 : Math.min(size - 1, Number(match[2]));
  return end < start ? null : { start, end };
}
