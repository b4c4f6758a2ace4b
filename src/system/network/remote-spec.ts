// The job's remote data (--remote, --endpoint), parsed once: the origins the proxy meters, and its name in messages and
// the profile (`display`: no credentials, no query).
import { ExitCode, UserError } from '../../errors.js';
import { NETWORK_TEXT } from './network-text.js';

export interface RemoteSpec {
  kind: 's3' | 'http';
  /** The data as written to the profile, reports and logs: scheme, host and path; no credentials, no query. */
  display: string;
  /** The endpoint's scheme: over https the proxy sees tunnels, not requests. */
  protocol: 'http' | 'https';
  /** host:port of every origin that serves the data. */
  origins: string[];
  /** Object storage: the endpoint (null for AWS itself), bucket, key prefix and region. */
  s3?: { endpoint: string | null; bucket: string; prefix: string; region: string };
  /** HTTP: every object's URL (credentials and query as given). */
  urls?: string[];
}

const MAX_EXPANDED_URLS = 1_000_000;

/** The spec of `--remote TEXT` (with `--endpoint` or the AWS variables); a UserError naming the fix otherwise. */
export function parseRemoteSpec(text: string, endpoint: string | undefined, env: NodeJS.ProcessEnv): RemoteSpec {
  if (text.startsWith('s3://')) return s3Spec(text, endpoint ?? env.AWS_ENDPOINT_URL_S3 ?? env.AWS_ENDPOINT_URL, env);
  if (/^https?:\/\//.test(text)) {
    if (endpoint) throw new UserError(NETWORK_TEXT.endpointNotS3, ExitCode.Usage);
    return httpSpec(text);
  }
  throw new UserError(NETWORK_TEXT.notRemote(redactUrl(text)), ExitCode.BadValue);
}

/** A URL as it may be shown: no user name, password, query or fragment (WebDataset braces kept). */
export function redactUrl(text: string): string {
  return text.replace(/^([a-z][a-z0-9+.-]*:\/\/)[^/?#]*@/i, '$1').replace(/[?#].*$/, '');
}

function s3Spec(text: string, endpoint: string | undefined, env: NodeJS.ProcessEnv): RemoteSpec {
  const match = /^s3:\/\/([^/]+)\/?(.*)$/.exec(text);
  if (!match || match[1] === '') throw new UserError(NETWORK_TEXT.noBucket(text), ExitCode.BadValue);
  const [, bucket, prefix] = match;
  const region = env.AWS_REGION ?? env.AWS_DEFAULT_REGION ?? 'us-east-1';
  if (endpoint) {
    let url: URL;
    try {
      url = new URL(endpoint);
    } catch {
      throw new UserError(NETWORK_TEXT.endpointNotUrl(redactUrl(endpoint)), ExitCode.BadValue);
    }
    const protocol = url.protocol === 'https:' ? 'https' : 'http';
    const port = url.port || (protocol === 'https' ? '443' : '80');
    return {
      kind: 's3',
      display: `s3://${bucket}/${prefix} at ${protocol}://${url.host}`,
      protocol,
      // Path-style at a custom endpoint; virtual-hosted clients ask for bucket.host.
      origins: [`${url.hostname}:${port}`, `${bucket}.${url.hostname}:${port}`],
      s3: { endpoint: `${protocol}://${url.host}`, bucket, prefix, region },
    };
  }
  return {
    kind: 's3',
    display: `s3://${bucket}/${prefix}`,
    protocol: 'https',
    origins: [
      `${bucket}.s3.${region}.amazonaws.com:443`,
      `s3.${region}.amazonaws.com:443`,
      `${bucket}.s3.amazonaws.com:443`,
      's3.amazonaws.com:443',
    ],
    s3: { endpoint: null, bucket, prefix, region },
  };
}

function httpSpec(text: string): RemoteSpec {
  const urls = expandBraces(text);
  const parsed = urls.map((u) => {
    try {
      return new URL(u);
    } catch {
      throw new UserError(NETWORK_TEXT.remoteNotUrl(redactUrl(u)), ExitCode.BadValue);
    }
  });
  const protocol = parsed[0].protocol === 'https:' ? 'https' : 'http';
  const origins = [...new Set(parsed.map((u) => `${u.hostname}:${u.port || (u.protocol === 'https:' ? 443 : 80)}`))];
  return { kind: 'http', display: redactUrl(text), protocol, origins, urls };
}

/** WebDataset's `{000..099}` and `{a,b}` expanded; their product is checked first, so a huge one is refused. */
export function expandBraces(text: string): string[] {
  const total = [...text.matchAll(/\{([^{}]*)\}/g)].reduce(
    (product, group) => product * groupParts(group[1]).length,
    1,
  );
  if (total > MAX_EXPANDED_URLS) {
    throw new UserError(NETWORK_TEXT.tooManyUrls(total, MAX_EXPANDED_URLS), ExitCode.BadValue);
  }
  return expandGroups(text);
}

function expandGroups(text: string): string[] {
  const match = /\{([^{}]*)\}/.exec(text);
  if (!match) return [text];
  const head = text.slice(0, match.index);
  const tail = text.slice(match.index + match[0].length);
  return groupParts(match[1]).flatMap((part) => expandGroups(`${head}${part}${tail}`));
}

/** The alternatives of one brace group: a zero-padded range, or a comma list. */
function groupParts(group: string): string[] {
  const range = /^(\d+)\.\.(\d+)$/.exec(group);
  if (!range) return group.split(',');
  const [from, to] = [Number(range[1]), Number(range[2])];
  if (to < from || to - from >= MAX_EXPANDED_URLS) throw new UserError(NETWORK_TEXT.badRange(group), ExitCode.BadValue);
  const width = range[1].length;
  return Array.from({ length: to - from + 1 }, (_, k) => String(from + k).padStart(width, '0'));
}
