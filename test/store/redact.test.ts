import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { ProfileSchema, type Profile } from '../../src/schema/profile.js';
import { commandWithoutSecrets, hostnamesOf, redactProfile, Redactor, REDACTED } from '../../src/store/redact.js';
import { fileSink, redactingSink } from '../../src/store/artifact-sink.js';

const FIXTURE = new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);
const HOME = '/home/alice';
const CWD = '/home/alice/work/proj';
const places = { home: HOME, cwd: CWD };
const TOKEN = 'hf_s3cr3tTokenValue123';
const AWS = 'AKIAIOSFODNN7EXAMPLE';

test('secrets on a command line, with and without --redact (table)', () => {
  const cases: [string[], string[], string[]][] = [
    // argv, always, with --redact
    [
      ['python', 'train.py', `--token=${TOKEN}`],
      ['python', 'train.py', `--token=${TOKEN}`],
      ['python', 'train.py', `--token=${REDACTED}`],
    ],
    [
      ['python', 'train.py', '--api-key', TOKEN, '--lr', '0.1'],
      ['python', 'train.py', '--api-key', TOKEN, '--lr', '0.1'],
      ['python', 'train.py', '--api-key', REDACTED, '--lr', '0.1'],
    ],
    [
      ['python', 't.py', '--password', '--verbose'],
      ['python', 't.py', '--password', '--verbose'],
      ['python', 't.py', '--password', '--verbose'],
    ],
    [
      ['env', `HF_TOKEN=${TOKEN}`, 'python', 't.py'],
      ['env', `HF_TOKEN=${REDACTED}`, 'python', 't.py'],
      ['env', `HF_TOKEN=${REDACTED}`, 'python', 't.py'],
    ],
    [
      ['python', 't.py', `--url=https://bob:pa55@store.example.com/x`],
      ['python', 't.py', `--url=https://${REDACTED}@store.example.com/x`],
      ['python', 't.py', `--url=https://${REDACTED}@store.example.com/x`],
    ],
    [
      ['python', 't.py', 'https://s3.example.com/b/o?X-Amz-Signature=abc&x=1'],
      ['python', 't.py', `https://s3.example.com/b/o?${REDACTED}`],
      ['python', 't.py', `https://s3.example.com/b/o?${REDACTED}`],
    ],
    [
      ['python', 't.py', 'https://example.com/data?page=2'],
      ['python', 't.py', 'https://example.com/data?page=2'],
      ['python', 't.py', 'https://example.com/data?page=2'],
    ],
    [
      ['aws', 's3', 'cp', AWS],
      ['aws', 's3', 'cp', REDACTED],
      ['aws', 's3', 'cp', REDACTED],
    ],
    [
      ['python', 'train.py', '--epochs', '3', '--keyframes', '4'],
      ['python', 'train.py', '--epochs', '3', '--keyframes', '4'],
      ['python', 'train.py', '--epochs', '3', '--keyframes', REDACTED],
    ],
  ];
  for (const [argv, always, redacted] of cases) {
    assert.deepEqual(commandWithoutSecrets(argv), always, `always: ${argv.join(' ')}`);
    assert.deepEqual(commandWithoutSecrets(argv, true), redacted, `--redact: ${argv.join(' ')}`);
  }
});

test('paths and host names (table)', () => {
  const r = new Redactor(places, ['gpu-07.cluster.local', 'gpu-08']);
  const cases: [string, string][] = [
    ['/home/alice/work/proj/profiles/x.d/cold/stdout.log', 'profiles/x.d/cold/stdout.log'],
    ['/home/alice/datasets/imagenet', '~/datasets/imagenet'],
    ['/home/alice', '~'],
    ['/mnt/nfs/bob/train', '<abs>/train'],
    ['/sys/fs/cgroup/blkio', '/sys/fs/cgroup/blkio'],
    ['read 12.5 MB/s from /data/train on gpu-07.cluster.local', 'read 12.5 MB/s from <abs>/train on host-0'],
    ['gpu-07 and gpu-08 met at gpu-08:15000', 'host-0 and host-1 met at host-1:15000'],
    ['see http://example.com/a/b', 'see http://example.com/a/b'],
    ['gpu-080 is another host', 'gpu-080 is another host'],
  ];
  for (const [text, expected] of cases) assert.equal(r.text(text), expected, text);
});

test('redacted text never holds the home folder, a known host name or a secret flag value (property)', () => {
  const segment = fc.stringMatching(/^[a-z0-9_-]{1,8}$/);
  fc.assert(
    fc.property(
      fc.array(segment, { minLength: 1, maxLength: 4 }),
      segment,
      fc.stringMatching(/^[A-Za-z0-9]{8,20}$/),
      (parts, host, secret) => {
        const hostname = `${host}-node`;
        const r = new Redactor(places, [hostname]);
        const path = `${HOME}/${parts.join('/')}`;
        const text = r.text(`wrote ${path} on ${hostname}`);
        assert.ok(!text.includes(HOME), text);
        assert.ok(!new RegExp(`(^|[^\\w-])${hostname}([^\\w-]|$)`).test(text), text);
        const argv = r.command(['python', path, '--secret', secret, `--auth-token=${secret}`]);
        assert.ok(
          argv.every((a) => !a.includes(HOME) && a !== secret && !a.endsWith(`=${secret}`)),
          argv.join(' '),
        );
      },
    ),
  );
});

/** The fixture as a user's run would have written it: their home, their host, a token on the command line. */
function usersProfile(): Profile {
  const profile = ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));
  const raw = JSON.stringify(profile);
  const own = JSON.parse(raw.split(profile.host.hostname).join('alice-ws.corp.example')) as Profile;
  own.command = [
    'python',
    `${HOME}/work/proj/train.py`,
    '--data',
    `${HOME}/datasets/tiny`,
    '--hf-token',
    TOKEN,
    `--wandb-key=${TOKEN}`,
  ];
  own.options.data = [`${HOME}/datasets/tiny`];
  own.dataset.roots = [`${HOME}/datasets/tiny`];
  own.modes.cold!.logs = {
    stdout: `${CWD}/profiles/job.d/cold/stdout.log`,
    stderr: `${CWD}/profiles/job.d/cold/stderr.log`,
  };
  own.warnings = [
    ...(own.warnings ?? []),
    `the job read /home/alice/.cache/torch/hub outside --data on alice-ws.corp.example`,
  ];
  return ProfileSchema.parse(own);
}

test('a profile written through the redacting sink holds no host name, no home path and no token of the command line', () => {
  const profile = usersProfile();
  assert.ok(hostnamesOf(profile).includes('alice-ws.corp.example'));
  const dir = mkdtempSync(join(tmpdir(), 'dsa-redact-'));
  try {
    const path = join(dir, 'job.json');
    redactingSink(fileSink, places).saveProfile(path, profile);
    const text = readFileSync(path, 'utf8');
    for (const leak of ['alice-ws', HOME, TOKEN, '/home/']) assert.ok(!text.includes(leak), `the file holds '${leak}'`);
    const saved = ProfileSchema.parse(JSON.parse(text));
    assert.equal(saved.host.hostname, 'host-0');
    assert.deepEqual(saved.command, [
      'python',
      'train.py',
      '--data',
      '~/datasets/tiny',
      '--hf-token',
      REDACTED,
      `--wandb-key=${REDACTED}`,
    ]);
    assert.deepEqual(saved.dataset.roots, ['~/datasets/tiny']);
    assert.equal(saved.modes.cold!.logs.stdout, 'profiles/job.d/cold/stdout.log');
    // Numbers and structure are the profile's own.
    assert.deepEqual(saved.modes.cold!.summary, profile.modes.cold!.summary);
    assert.deepEqual(redactProfile(saved, places), saved, 'redacting twice changes nothing');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the job's logs lose what its command's secrets and the profile's host names and paths are: a job that echoes its arguments", () => {
  const r = new Redactor(places, ['alice-ws'], ['python', 'train.py', '--hf-token', TOKEN, `--wandb-key=${TOKEN}x`]);
  assert.equal(
    r.text(`args: --hf-token ${TOKEN} --wandb-key=${TOKEN}x\nsaving to /home/alice/ckpt on alice-ws\n`),
    `args: --hf-token ${REDACTED} --wandb-key=${REDACTED}\nsaving to ~/ckpt on host-0\n`,
  );
});
