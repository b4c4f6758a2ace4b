// The objects of a remote dataset, listed once and fetched directly (not through the proxy) to fill the cache and probe
// the network; S3 credentials stay in the AWS SDK's chain.
import type { S3Client } from '@aws-sdk/client-s3';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { ExitCode, UserError } from '../../errors.js';
import { beforeDeadline, isAbort, netDeadlines, StallError, watchBody, type NetDeadlines } from './deadlines.js';
import { lostToKeepAlive } from './kept-alive-race.js';
import { NETWORK_TEXT } from './network-text.js';
import { objectKey } from './response-cache.js';
import { redactUrl, type RemoteSpec } from './remote-spec.js';

export interface RemoteObject {
  /** The object as the profile and messages name it (bucket/key, or the URL's path). */
  path: string;
  /** Body bytes. */
  bytes: number;
  /** The proxy's key for the job's requests of it (host and decoded path, path-style). */
  cacheKey: string;
}

/** A fetched object: the headers to send again, and its body. */
export interface FetchedObject {
  headers: Record<string, string>;
  body: Readable;
}

/** How one object is fetched. */
export interface FetchOptions {
  /** Aborts the request and its body. */
  signal?: AbortSignal;
  /** Told the bytes of each chunk of the body as it is read. */
  onBytes?: (bytes: number) => void;
}

/** Lists and fetches the objects of one spec. */
export interface RemoteStore {
  list(): Promise<RemoteObject[]>;
  /** The object's headers and body (which fails with an EndpointError when the endpoint fails or stalls). */
  fetch(object: RemoteObject, options?: FetchOptions): Promise<FetchedObject>;
  close(): void;
}

/** A request to the data's endpoint failed, or it stopped answering (`stalled`): a user error naming the endpoint. */
export class EndpointError extends UserError {
  constructor(
    message: string,
    exitCode: ExitCode,
    /** The endpoint stopped answering: a deadline passed. */
    readonly stalled = false,
  ) {
    super(message, exitCode);
  }
}

const HEAD_CONCURRENCY = 16;

/** The store of `spec`'s objects; `deadlines` default to netDeadlines() (DSA_NET_DEADLINE_SEC). */
export function remoteStore(spec: RemoteSpec, deadlines: NetDeadlines = netDeadlines()): RemoteStore {
  return spec.kind === 's3' ? s3Store(spec, deadlines) : httpStore(spec, deadlines);
}

/** The fix for a failed request, by what failed; an abort (the caller's signal) goes on as it is. */
function failure(what: string, spec: RemoteSpec, error: unknown): Error {
  if (isAbort(error) || error instanceof EndpointError) return error as Error;
  if (error instanceof StallError)
    return new EndpointError(
      NETWORK_TEXT.stalled(what, spec.display, error.afterMs / 1000),
      ExitCode.Environment,
      true,
    );
  const e = error as {
    code?: string;
    name?: string;
    message?: string;
    $metadata?: { httpStatusCode?: number };
    cause?: { code?: string };
  };
  const status = e.$metadata?.httpStatusCode;
  const code = e.code ?? e.cause?.code ?? e.name ?? 'error';
  if (status === 403 || code === 'AccessDenied' || code === 'InvalidAccessKeyId' || code === 'SignatureDoesNotMatch') {
    return new EndpointError(NETWORK_TEXT.accessDenied(what, spec.display, code), ExitCode.Environment);
  }
  if (status === 404 || code === 'NoSuchBucket' || code === 'NotFound') {
    return new EndpointError(NETWORK_TEXT.notFound(what, spec.display, code), ExitCode.MissingInput);
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH/.test(`${code} ${e.message ?? ''}`)) {
    return new EndpointError(NETWORK_TEXT.noAnswer(what, spec.display, code), ExitCode.Environment);
  }
  if (/credential/i.test(e.message ?? '')) {
    return new EndpointError(NETWORK_TEXT.noCredentials(what, spec.display), ExitCode.Environment);
  }
  return new EndpointError(NETWORK_TEXT.failed(what, spec.display, code, status), ExitCode.Environment);
}

/** The AWS SDK, loaded with the first request (about 250 ms of CPU: local data and HTTP shards never need it). */
type S3Sdk = typeof import('@aws-sdk/client-s3');

/** One S3 client for a spec, made with the first request, under the deadlines. */
function lazyS3Client(spec: RemoteSpec, deadlines: NetDeadlines) {
  const { endpoint, region } = spec.s3!;
  // The SDK warns on Node 20 that releases after January 2027 need Node 22: noise in every profile.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  let client: S3Client | null = null;
  return {
    async get(): Promise<{ s3: S3Sdk; client: S3Client }> {
      const s3 = await import('@aws-sdk/client-s3');
      client ??= new s3.S3Client({
        region,
        ...(endpoint ? { endpoint, forcePathStyle: true } : {}),
        maxAttempts: 2,
        // The SDK's own timeouts under each attempt; beforeDeadline bounds the attempts together.
        requestHandler: {
          connectionTimeout: deadlines.answerMs,
          requestTimeout: deadlines.answerMs,
          throwOnRequestTimeout: true,
          socketTimeout: deadlines.idleMs,
        },
      });
      return { s3, client };
    },
    close: () => client?.destroy(),
  };
}

/** The proxy's key for an object: path-style at a custom endpoint, virtual-hosted at AWS. */
function s3KeyOf(spec: RemoteSpec, key: string): string {
  const { endpoint, bucket, region } = spec.s3!;
  return objectKey(
    new URL(
      endpoint
        ? `${endpoint}/${bucket}/${encodeKey(key)}`
        : `https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`,
    ),
  );
}

/** Every object under the spec's prefix, a page at a time (ListObjectsV2), each page under the answer deadline. */
async function listS3(spec: RemoteSpec, deadlines: NetDeadlines, { s3, client }: { s3: S3Sdk; client: S3Client }) {
  const { bucket, prefix } = spec.s3!;
  const objects: RemoteObject[] = [];
  let token: string | undefined;
  do {
    const command = new s3.ListObjectsV2Command({
      Bucket: bucket,
      Prefix: prefix || undefined,
      ContinuationToken: token,
    });
    const page = await beforeDeadline(deadlines.answerMs, undefined, (signal) =>
      client.send(command, { abortSignal: signal }),
    );
    for (const item of page.Contents ?? []) {
      if (item.Key === undefined || item.Key.endsWith('/')) continue;
      objects.push({ path: `${bucket}/${item.Key}`, bytes: item.Size ?? 0, cacheKey: s3KeyOf(spec, item.Key) });
    }
    token = page.IsTruncated ? page.NextContinuationToken : undefined;
  } while (token);
  return objects;
}

function s3Store(spec: RemoteSpec, deadlines: NetDeadlines): RemoteStore {
  const { bucket } = spec.s3!;
  const sdk = lazyS3Client(spec, deadlines);
  return {
    async list() {
      try {
        return await listS3(spec, deadlines, await sdk.get());
      } catch (error) {
        throw failure('listing', spec, error);
      }
    },
    async fetch(object, options) {
      const key = object.path.slice(bucket.length + 1);
      const { s3, client } = await sdk.get();
      try {
        const command = new s3.GetObjectCommand({ Bucket: bucket, Key: key });
        const got = await beforeDeadline(deadlines.answerMs, options?.signal, (signal) =>
          client.send(command, { abortSignal: signal }),
        );
        const headers: Record<string, string> = {};
        if (got.ContentType) headers['content-type'] = got.ContentType;
        if (got.ETag) headers.etag = got.ETag;
        if (got.LastModified) headers['last-modified'] = got.LastModified.toUTCString();
        const body = watchBody(
          got.Body as Readable,
          deadlines.idleMs,
          (error) => failure('fetching', spec, error),
          options?.signal,
          options?.onBytes,
        );
        return { headers, body };
      } catch (error) {
        throw failure('fetching', spec, error);
      }
    },
    close: () => sdk.close(),
  };
}

/** An S3 key as a URL path: each segment percent-encoded, the slashes kept. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/** A request with node's http client (fetch() refuses credentials in URLs and ports such as 6000); no redirects. */
function httpRequest(url: string, method: 'HEAD' | 'GET', signal: AbortSignal): Promise<http.IncomingMessage> {
  const parsed = new URL(url);
  const client = parsed.protocol === 'https:' ? https : http;
  const auth =
    parsed.username || parsed.password
      ? `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`
      : undefined;
  const send = (retried: boolean): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => {
      const req = client.request(parsed, { method, auth, signal, ...(retried ? { agent: false } : {}) }, resolve);
      req.on('error', (error: NodeJS.ErrnoException) =>
        !retried && lostToKeepAlive(req, error) ? resolve(send(true)) : reject(error),
      );
      req.end();
    });
  return send(false);
}

function httpStore(spec: RemoteSpec, deadlines: NetDeadlines): RemoteStore {
  const urls = spec.urls!;
  const get = async (url: string, method: 'HEAD' | 'GET', signal?: AbortSignal): Promise<http.IncomingMessage> => {
    const what = method === 'HEAD' ? 'listing' : 'fetching';
    const named = { ...spec, display: redactUrl(url) };
    let response: http.IncomingMessage;
    try {
      response = await beforeDeadline(deadlines.answerMs, signal, (bounded) => httpRequest(url, method, bounded));
    } catch (error) {
      throw failure(what, named, error);
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      response.resume();
      throw failure(what, named, { $metadata: { httpStatusCode: status }, code: `HTTP ${status}` });
    }
    return response;
  };
  const byKey = new Map(urls.map((u) => [objectKey(new URL(u)), u]));
  return {
    async list() {
      const objects: RemoteObject[] = new Array(urls.length);
      let next = 0;
      const worker = async () => {
        for (let k = next++; k < urls.length; k = next++) {
          const response = await get(urls[k], 'HEAD');
          response.resume();
          const length = Number(response.headers['content-length']);
          const url = new URL(urls[k]);
          objects[k] = {
            path: `${url.host}${url.pathname}`,
            bytes: Number.isFinite(length) ? length : 0,
            cacheKey: objectKey(url),
          };
        }
      };
      await Promise.all(Array.from({ length: Math.min(HEAD_CONCURRENCY, urls.length) }, worker));
      return objects;
    },
    async fetch(object, options) {
      const url = byKey.get(object.cacheKey) ?? urls[0];
      const response = await get(url, 'GET', options?.signal);
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (typeof value === 'string') headers[name] = value;
      const named = { ...spec, display: redactUrl(url) };
      const failed = (error: unknown) => failure('fetching', named, error);
      const body = watchBody(response, deadlines.idleMs, failed, options?.signal, options?.onBytes);
      return { headers, body };
    },
    close: () => undefined,
  };
}
