// The objects of a remote dataset: listed once before anything runs (S3's
// ListObjectsV2, or a HEAD of each HTTP URL) and fetched directly, not through
// the proxy, to fill the profiler's cache and to probe the network. S3 goes
// through the AWS SDK, so credentials come from the standard chain
// (environment, shared files, instance roles) and are never seen here.
import type { S3Client } from '@aws-sdk/client-s3';
import http from 'node:http';
import https from 'node:https';
import type { Readable } from 'node:stream';
import { ExitCode, UserError } from '../../errors.js';
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

/** Lists and fetches the objects of one spec. */
export interface RemoteStore {
  list(): Promise<RemoteObject[]>;
  fetch(object: RemoteObject): Promise<FetchedObject>;
  close(): void;
}

const HEAD_CONCURRENCY = 16;

export function remoteStore(spec: RemoteSpec): RemoteStore {
  return spec.kind === 's3' ? s3Store(spec) : httpStore(spec);
}

/** The fix for a failed request, by what failed. */
function failure(what: string, spec: RemoteSpec, error: unknown): UserError {
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
    return new UserError(NETWORK_TEXT.accessDenied(what, spec.display, code), ExitCode.Environment);
  }
  if (status === 404 || code === 'NoSuchBucket' || code === 'NotFound') {
    return new UserError(NETWORK_TEXT.notFound(what, spec.display, code), ExitCode.MissingInput);
  }
  if (/ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|ECONNRESET|EHOSTUNREACH/.test(`${code} ${e.message ?? ''}`)) {
    return new UserError(NETWORK_TEXT.noAnswer(what, spec.display, code), ExitCode.Environment);
  }
  if (/credential/i.test(e.message ?? '')) {
    return new UserError(NETWORK_TEXT.noCredentials(what, spec.display), ExitCode.Environment);
  }
  return new UserError(NETWORK_TEXT.failed(what, spec.display, code, status), ExitCode.Environment);
}

function s3Store(spec: RemoteSpec): RemoteStore {
  const { endpoint, bucket, prefix, region } = spec.s3!;
  // The SDK warns on Node 20 that its releases after January 2027 need Node 22: the version locked here runs, and the
  // warning would be noise in every profile.
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
  let client: S3Client | null = null;
  // The SDK loads with the first request (about 250 ms of CPU): local data and HTTP shards never need it.
  const sdk = async () => {
    const s3 = await import('@aws-sdk/client-s3');
    client ??= new s3.S3Client({ region, ...(endpoint ? { endpoint, forcePathStyle: true } : {}), maxAttempts: 2 });
    return { s3, client };
  };
  // The job's client asks a custom endpoint path-style (host/bucket/key), AWS virtual-hosted (bucket.host/key): the
  // proxy's key follows.
  const keyOf = (key: string) =>
    objectKey(
      new URL(
        endpoint
          ? `${endpoint}/${bucket}/${encodeKey(key)}`
          : `https://${bucket}.s3.${region}.amazonaws.com/${encodeKey(key)}`,
      ),
    );
  return {
    async list() {
      const objects: RemoteObject[] = [];
      let token: string | undefined;
      const { s3, client } = await sdk();
      try {
        do {
          const page = await client.send(
            new s3.ListObjectsV2Command({ Bucket: bucket, Prefix: prefix || undefined, ContinuationToken: token }),
          );
          for (const item of page.Contents ?? []) {
            if (item.Key === undefined || item.Key.endsWith('/')) continue;
            objects.push({ path: `${bucket}/${item.Key}`, bytes: item.Size ?? 0, cacheKey: keyOf(item.Key) });
          }
          token = page.IsTruncated ? page.NextContinuationToken : undefined;
        } while (token);
      } catch (error) {
        throw failure('listing', spec, error);
      }
      return objects;
    },
    async fetch(object) {
      const key = object.path.slice(bucket.length + 1);
      const { s3, client } = await sdk();
      try {
        const got = await client.send(new s3.GetObjectCommand({ Bucket: bucket, Key: key }));
        const headers: Record<string, string> = {};
        if (got.ContentType) headers['content-type'] = got.ContentType;
        if (got.ETag) headers.etag = got.ETag;
        if (got.LastModified) headers['last-modified'] = got.LastModified.toUTCString();
        return { headers, body: got.Body as Readable };
      } catch (error) {
        throw failure('fetching', spec, error);
      }
    },
    close: () => client?.destroy(),
  };
}

/** An S3 key as a URL path: each segment percent-encoded, the slashes kept. */
function encodeKey(key: string): string {
  return key.split('/').map(encodeURIComponent).join('/');
}

/**
 * A request straight to the origin with node's http client: fetch() refuses
 * URLs with credentials and the ports the Fetch standard blocks (9, 6000...),
 * which a private shard server may well use. Redirects are not followed.
 */
function httpRequest(url: string, method: 'HEAD' | 'GET'): Promise<http.IncomingMessage> {
  const parsed = new URL(url);
  const client = parsed.protocol === 'https:' ? https : http;
  const auth =
    parsed.username || parsed.password
      ? `${decodeURIComponent(parsed.username)}:${decodeURIComponent(parsed.password)}`
      : undefined;
  return new Promise((resolve, reject) => {
    const req = client.request(parsed, { method, auth }, resolve);
    req.on('error', reject);
    req.end();
  });
}

function httpStore(spec: RemoteSpec): RemoteStore {
  const urls = spec.urls!;
  const get = async (url: string, method: 'HEAD' | 'GET'): Promise<http.IncomingMessage> => {
    const what = method === 'HEAD' ? 'listing' : 'fetching';
    let response: http.IncomingMessage;
    try {
      response = await httpRequest(url, method);
    } catch (error) {
      throw failure(what, { ...spec, display: redactUrl(url) }, error);
    }
    const status = response.statusCode ?? 0;
    if (status < 200 || status >= 300) {
      response.resume();
      throw failure(
        what,
        { ...spec, display: redactUrl(url) },
        { $metadata: { httpStatusCode: status }, code: `HTTP ${status}` },
      );
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
    async fetch(object) {
      const url = byKey.get(object.cacheKey) ?? urls[0];
      const response = await get(url, 'GET');
      const headers: Record<string, string> = {};
      for (const [name, value] of Object.entries(response.headers))
        if (typeof value === 'string') headers[name] = value;
      return { headers, body: response };
    },
    close: () => undefined,
  };
}
