import { test } from 'node:test';
import assert from 'node:assert/strict';
import { expandBraces, parseRemoteSpec, redactUrl } from '../../../src/system/network/remote-spec.js';
import { withoutHosts } from '../../../src/profile/data-sources/remote-objects.js';
import { type UserError, ExitCode } from '../../../src/errors.js';

test('an s3:// spec at a custom endpoint meters the endpoint path-style and virtual-hosted, and names it without credentials', () => {
  const spec = parseRemoteSpec('s3://data/train/', 'http://key:secret@127.0.0.1:9000', {});
  assert.equal(spec.kind, 's3');
  assert.equal(spec.display, 's3://data/train/ at http://127.0.0.1:9000');
  assert.deepEqual(spec.origins, ['127.0.0.1:9000', 'data.127.0.0.1:9000']);
  assert.deepEqual(spec.s3, {
    endpoint: 'http://127.0.0.1:9000',
    bucket: 'data',
    prefix: 'train/',
    region: 'us-east-1',
  });
  assert.equal(
    parseRemoteSpec('s3://data/x', undefined, { AWS_ENDPOINT_URL: 'https://minio.lan' }).origins[0],
    'minio.lan:443',
  );
  const aws = parseRemoteSpec('s3://data/x', undefined, { AWS_REGION: 'eu-west-1' });
  assert.equal(aws.protocol, 'https');
  assert.ok(aws.origins.includes('data.s3.eu-west-1.amazonaws.com:443'));
});

test('http specs expand WebDataset braces and keep credentials and queries out of their name', () => {
  assert.deepEqual(expandBraces('http://h/s-{08..11}.tar'), [
    'http://h/s-08.tar',
    'http://h/s-09.tar',
    'http://h/s-10.tar',
    'http://h/s-11.tar',
  ]);
  assert.deepEqual(expandBraces('http://h/{a,b}/{0..1}.tar'), [
    'http://h/a/0.tar',
    'http://h/a/1.tar',
    'http://h/b/0.tar',
    'http://h/b/1.tar',
  ]);
  const spec = parseRemoteSpec('https://u:p@cdn.example.com:8443/train-{0..2}.tar?sig=abc', undefined, {});
  assert.equal(spec.display, 'https://cdn.example.com:8443/train-{0..2}.tar');
  assert.deepEqual(spec.origins, ['cdn.example.com:8443']);
  assert.equal(spec.urls?.length, 3);
  assert.equal(redactUrl('http://user:pw@h/p?token=x'), 'http://h/p');
});

test('bad specs are one-line usage errors with the fix', () => {
  const error = (f: () => unknown) => {
    try {
      f();
    } catch (e) {
      return e as UserError;
    }
    throw new Error('no error');
  };
  assert.match(
    error(() => parseRemoteSpec('ftp://h/x', undefined, {})).message,
    /is not s3:\/\/BUCKET\/PREFIX or an http\(s\):\/\/ URL/,
  );
  assert.equal(error(() => parseRemoteSpec('s3://', undefined, {})).exitCode, ExitCode.BadValue);
  assert.match(
    error(() => parseRemoteSpec('http://h/x', 'http://e', {})).message,
    /--endpoint applies to s3:\/\/ data only/,
  );
  assert.match(error(() => expandBraces('http://h/{5..1}')).message, /empty or too long/);
  assert.match(
    error(() => expandBraces('http://h/{0..99999}-{0..99999}')).message,
    /names 10000000000 URLs, more than 1000000/,
  );
});

test("the job's NO_PROXY loses only the entries that would route the data around the proxy", () => {
  assert.equal(withoutHosts('localhost,127.0.0.1,.corp.lan,pypi.org', ['127.0.0.1:9000']), '.corp.lan,pypi.org');
  assert.equal(withoutHosts('.example.com, other.org', ['cdn.example.com:443']), 'other.org');
  assert.equal(withoutHosts('*', ['h:80']), '');
  assert.equal(withoutHosts('', ['h:80']), '');
});
