// Messages of remote data's errors, shown to users: one line each, with the cause, the flag and the fix. remote-spec.ts
// and remote-objects.ts decide; the words live here.

/** Messages of the `--remote` spec and of the requests to object storage or HTTP. */
export const NETWORK_TEXT = {
  endpointNotS3: '--endpoint applies to s3:// data only: put the host in the --remote URL',
  notRemote: (shown: string) =>
    `--remote: '${shown}' is not s3://BUCKET/PREFIX or an http(s):// URL; e.g. --remote s3://datasets/imagenet/train`,
  noBucket: (text: string) => `--remote: '${text}' names no bucket; use s3://BUCKET/PREFIX`,
  endpointNotUrl: (shown: string) => `--endpoint: '${shown}' is not a URL; e.g. --endpoint http://127.0.0.1:9000`,
  remoteNotUrl: (shown: string) => `--remote: '${shown}' is not a URL`,
  tooManyUrls: (total: number, max: number) => `--remote: the pattern names ${total} URLs, more than ${max}`,
  badRange: (group: string) => `--remote: the range {${group}} is empty or too long`,
  // A failed request: `what` is the request ('listing', 'fetching'), `where` the spec's display.
  accessDenied: (what: string, where: string, code: string) =>
    `${what} ${where}: access denied (${code}): ` +
    'give the credentials the job uses (AWS_ACCESS_KEY_ID/AWS_PROFILE) to ds-analyzer too',
  notFound: (what: string, where: string, code: string) =>
    `${what} ${where}: not found (${code}): check the bucket, prefix or URL`,
  noAnswer: (what: string, where: string, code: string) =>
    `${what} ${where}: the endpoint does not answer (${code}): start the server or fix the endpoint`,
  stalled: (what: string, where: string, sec: number) =>
    `${what} ${where}: the endpoint stopped answering (nothing for ${Number(sec.toFixed(1))} s): check that the server runs and that ` +
    'the network reaches it',
  noCredentials: (what: string, where: string) =>
    `${what} ${where}: no AWS credentials found: set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE`,
  failed: (what: string, where: string, code: string, status: number | undefined) =>
    `${what} ${where}: ${code}${status ? ` (HTTP ${status})` : ''}`,
} as const;
