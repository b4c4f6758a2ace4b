import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readdirSync,
  rmSync,
  rmdirSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { execa } from 'execa';
import S3rver from 's3rver';
import { PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { cgroupV2Mount, groupAt, socketCounterObstacle } from '../../src/system/network/socket-counter.js';
import { PYTHON, startCli, torchMissing } from './helpers.js';

/**
 * A bucket mounted through FUSE, end to end: s3rver on loopback holds an
 * ImageFolder of JPEGs, Debian's s3fs mounts it (-o kernel_cache, so the page
 * cache in front of the mount keeps pages between opens), started in a cgroup
 * of its own as a service would be, and the unmodified example script
 * (examples/pytorch/train.py) trains on the mount. The job's read_bytes never
 * move on FUSE: the modes are proven by the bytes the s3fs daemon's sockets
 * receive, counted in the kernel.
 *
 * Proofs from bytes hold under load, so this file runs side by side (scripts/test-plan.ts); the daemon's socket
 * bytes that once went backwards under load are metered monotonically now (fuse-meter.ts).
 */
const EXAMPLES = fileURLToPath(new URL('../../../examples/pytorch/', import.meta.url));
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-fuse-'));
const mountPoint = join(work, 'mnt');
const SECRET = 'S3RVER';
// 40 iterations a mode (two to four epochs): the proofs are from bytes, so more iterations add CPU, not meaning.
const quick = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '40'];

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
let skipReason: string | null = null;
let server: S3rver | null = null;
let daemonGroup: string | null = null;

before(async () => {
  skipReason = (await torchMissing()) ?? (await socketCounterObstacle()) ?? (await s3fsMissing());
  if (skipReason) return;
  server = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: join(work, 's3'),
    configureBuckets: [{ name: 'data', configs: [] }],
  });
  const endpoint = `http://127.0.0.1:${((await server.run()) as AddressInfo).port}`;
  // 100 JPEGs of 400x300 (about 36 KiB each, 3.6 MiB): at 800x600 the decode was most of the job's CPU. s3fs's
  // metadata requests (a HEAD per open) are about the same per file at any size, so they weigh more against the
  // cached proof's < 5%: measured 0.9% of consumed bytes at this size (0.3% at 800x600); the cold mode 103-111%.
  const images = join(work, 'images');
  await execa(PYTHON, [
    join(EXAMPLES, 'make_dataset.py'),
    images,
    '--classes',
    '4',
    '--train-per-class',
    '25',
    '--val-per-class',
    '2',
    '--size',
    '400x300',
  ]);
  await upload(images, endpoint);
  // s3fs in a group of its own, as systemd runs a mount service; the test's own traffic stays outside it.
  const group = groupAt(`/dsa-e2e-fuse-${process.pid}`, cgroupV2Mount()!);
  mkdirSync(group.dir);
  daemonGroup = group.dir;
  mkdirSync(mountPoint);
  const passwd = join(work, 'passwd');
  writeFileSync(passwd, `${SECRET}:${SECRET}\n`, { mode: 0o600 });
  const options = `passwd_file=${passwd},url=${endpoint},use_path_request_style,kernel_cache,ro`;
  await execa('sh', [
    '-c',
    `echo $$ > ${join(group.dir, 'cgroup.procs')} && exec s3fs data ${mountPoint} -o ${options}`,
  ]);
  for (let k = 0; k < 100 && !readFileSync('/proc/self/mountinfo', 'utf8').includes(` ${mountPoint} `); k++)
    await sleep(100);
});

after(async () => {
  if (existsSync(mountPoint)) await execa('fusermount', ['-u', mountPoint], { reject: false });
  // The server first: a throw below must not leave it holding the file's process open.
  await server?.close();
  // s3fs leaves its group once unmounted: in under 5 s alone, in more at a load of 20 beside other files.
  for (let k = 0; daemonGroup && k < 600 && readFileSync(join(daemonGroup, 'cgroup.procs'), 'utf8').trim() !== ''; k++)
    await sleep(100);
  if (daemonGroup) rmdirSync(daemonGroup);
  rmSync(work, { recursive: true, force: true });
});

async function s3fsMissing(): Promise<string | null> {
  if (!existsSync('/dev/fuse')) return 'no /dev/fuse on this machine';
  const result = await execa('s3fs', ['--version'], { reject: false });
  return result.exitCode === 0 ? null : 's3fs is not installed (apt-get install s3fs)';
}

/** Every file under `dir` as an object, and a marker object for each folder (s3rver lists a folder only with one). */
async function upload(dir: string, endpoint: string): Promise<void> {
  const client = new S3Client({
    endpoint,
    forcePathStyle: true,
    region: 'us-east-1',
    credentials: { accessKeyId: SECRET, secretAccessKey: SECRET },
  });
  const walk = (d: string): string[] =>
    readdirSync(d).flatMap((e) =>
      statSync(join(d, e)).isDirectory() ? [`${join(d, e)}/`, ...walk(join(d, e))] : [join(d, e)],
    );
  for (const path of walk(dir)) {
    const key = relative(dir, path) + (path.endsWith('/') ? '/' : '');
    await client.send(
      new PutObjectCommand({
        Bucket: 'data',
        Key: key,
        Body: path.endsWith('/') ? Buffer.alloc(0) : readFileSync(path),
      }),
    );
  }
  client.destroy();
}

test("an ImageFolder on an s3fs mount: the cached and cold modes proven from the daemon's socket bytes, the mount recorded without its keys", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const out = join(work, 'fuse.json');
  const job = [
    PYTHON,
    join(EXAMPLES, 'train.py'),
    '-a',
    'squeezenet1_1',
    '-b',
    '8',
    '-j',
    '2',
    '--lr',
    '0.01',
    '--image-size',
    '32',
    '--epochs',
    '50',
    '-p',
    '1000',
    mountPoint,
  ];
  const result = await startCli(
    ['profile', '--data', join(mountPoint, 'train'), '--out', out, ...quick, '--', ...job],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const profile = readProfile(out);
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    assert.equal(m.state.proven, true, `${mode}: ${m.state.reason}`);
  }
  assert.match(profile.modes.cold!.state.reason, /fetched over the network/);
  assert.match(
    profile.modes.cold!.state.readBytesSource,
    /bytes the FUSE daemon \(s3fs(, pid \d+)?\) received over its sockets( over the whole run)?/,
  );
  assert.ok(
    profile.modes.cached!.state.readFraction! < 0.05,
    'the page cache in front of the mount served the cached mode',
  );
  const mount = profile.dataset.mount!;
  assert.equal(mount.type, 'fuse.s3fs');
  assert.equal(mount.mountPoint, mountPoint);
  assert.equal(mount.daemon?.program, 's3fs');
  assert.equal(mount.daemon?.cgroup, `/dsa-e2e-fuse-${process.pid}`);
  assert.match(result.stdout, /mount: s3fs at .* \(fuse\.s3fs\), read by s3fs \(pid \d+\)/);
  // The summary names the network as where the cold mode's bytes came from.
  assert.match(result.stdout, /cold network [\d.]+ samples\/s/);
  assert.match(result.stdout, /measured: network read /);
  assert.doesNotMatch(readFileSync(out, 'utf8'), /passwd_file|S3RVER:S3RVER/, "the daemon's arguments are not saved");
  // Tests beside this one may hold tables of their own: none may belong to a process that has ended.
  const tables = await execa('nft', ['list', 'tables', 'inet']);
  const owners = [...tables.stdout.matchAll(/ds_analyzer_(\d+)_/g)].map((m) => Number(m[1]));
  assert.deepEqual(
    owners.filter((pid) => !existsSync(`/proc/${pid}`)),
    [],
    'the counting table is gone with the profile',
  );
});
