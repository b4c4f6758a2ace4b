import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { execa } from 'execa';
import S3rver from 's3rver';
import { PYTHON, torchMissing } from './helpers.js';

/**
 * Remote data, end to end: an S3-compatible server (s3rver) on loopback, and
 * an unmodified-looking PyTorch script (examples/remote/s3_map_train.py) whose
 * map-style dataset GETs one object per sample with boto3. Shared by the files
 * that profile it: remote-s3.test.ts (behaviour, side by side) and
 * remote-s3-cap.test.ts (the fetch stall against the cap, alone).
 */
const SCRIPT = fileURLToPath(new URL('../../../examples/remote/s3_map_train.py', import.meta.url));
export const OBJECTS = 120;
export const OBJECT_BYTES = 256 * 1024;
/**
 * Objects of slightly mixed sizes, as real ones are: the network probe's bytes per request is then a mean, not a size.
 */
const objectBytes = (k: number) => OBJECT_BYTES + (k % 7);
export const TOTAL_BYTES = Array.from({ length: OBJECTS }, (_, k) => objectBytes(k)).reduce((a, b) => a + b, 0);
export const CREDENTIALS = {
  AWS_ACCESS_KEY_ID: 'S3RVER',
  AWS_SECRET_ACCESS_KEY: 'S3RVER',
  AWS_DEFAULT_REGION: 'us-east-1',
};
export const quick = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '80'];

/** The bucket `data` with OBJECTS objects under train/, served from `work`. */
export interface S3Fixture {
  work: string;
  endpoint: string;
  /** Why the job cannot run here (no torch or boto3), or null. */
  skipReason: string | null;
  /** The job's command line. */
  job(): string[];
  close(): Promise<void>;
}

async function boto3Missing(): Promise<string | null> {
  const result = await execa(PYTHON, ['-c', 'import boto3'], { reject: false });
  return result.exitCode === 0 ? null : `boto3 is not installed for ${PYTHON} (apt-get install python3-boto3)`;
}

/** Starts the server in a fresh folder and fills the bucket (nothing started when the job cannot run here). */
export async function startS3(prefix: string): Promise<S3Fixture> {
  const work = mkdtempSync(join(tmpdir(), prefix));
  const fixture: S3Fixture = {
    work,
    endpoint: '',
    skipReason: (await torchMissing()) ?? (await boto3Missing()),
    job: () => [
      PYTHON,
      SCRIPT,
      '--endpoint',
      fixture.endpoint,
      '--bucket',
      'data',
      '--prefix',
      'train/',
      '--workers',
      '2',
      '--batch-size',
      '8',
      '--epochs',
      '50',
    ],
    close: async () => rmSync(work, { recursive: true, force: true }),
  };
  if (fixture.skipReason) return fixture;
  const server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: join(work, 's3'),
    configureBuckets: [{ name: 'data', configs: [] }],
  });
  const address = (await server.run()) as AddressInfo;
  fixture.endpoint = `http://127.0.0.1:${address.port}`;
  fixture.close = async () => {
    await server.close();
    rmSync(work, { recursive: true, force: true });
  };
  process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
  await putObjects(fixture.endpoint, OBJECTS, objectBytes);
  return fixture;
}

/** Fills bucket `data` at `endpoint` (s3rver's keys) with `count` objects of random bytes, train/0000.bin on. */
export async function putObjects(endpoint: string, count: number, bytesOf: (k: number) => number): Promise<void> {
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
  });
  for (let k = 0; k < count; k++) {
    const Key = `train/${String(k).padStart(4, '0')}.bin`;
    await client.send(new PutObjectCommand({ Bucket: 'data', Key, Body: randomBytes(bytesOf(k)) }));
  }
  client.destroy();
}
