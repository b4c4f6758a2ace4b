/**
 * The split of a boto3 job over HTTPS in one launch against the same job run without the tool (issue 41: within
 * max(10% of the stall, 3% of the iteration)). s3rver behind a TLS server of the bench's own (a self-signed certificate
 * trusted through AWS_CA_BUNDLE), which holds each request LATENCY_MS before passing it on: the remote store's round
 * trip. The job is examples/remote/s3_map_train.py; its own meter prints each epoch's ms per iteration and the time it
 * waited for data. Without the tool it runs against that endpoint (every epoch fetches: the cold state) and against
 * a TLS server that answers each object from memory once fetched (the data a loopback away: the cached state as near
 * as a run without the tool gets; TLS and the HTTP round trip stay in it). Their truth: compute = ms per iteration less the wait, prep stall
 * = the near run's wait, fetch stall = the far run's wait less the near one's; and the iterations whole, the cached
 * mode's against the near run's, the cold mode's against the far run's. Printed: the tool's figures, the truth before
 * and after the profile, the difference and the margin.
 * Run: npm run bench -- https-split  (needs /usr/bin/python3 with torch and boto3, and openssl)
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import S3rver from 's3rver';
import { mean } from '../src/analysis/stats.js';
import { ProfileSchema, type Estimate } from '../src/schema/profile.js';
import { putObjects } from '../test/e2e/s3-server.js';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));
const SCRIPT = fileURLToPath(new URL('../../examples/remote/s3_map_train.py', import.meta.url));
const PYTHON = '/usr/bin/python3';
const OBJECTS = 400;
const OBJECT_BYTES = 64 * 1024;
/** The far endpoint's round trip: 8 objects a batch on 2 workers, about 4 x 25 ms of fetch a batch. */
const LATENCY_MS = 25;
/** The model's channels: a step of some tens of ms on one CPU thread. */
const WIDTH = '16';
const CREDENTIALS = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_DEFAULT_REGION: 'us-east-1' };
const JOB = ['--bucket', 'data', '--prefix', 'train/', '--workers', '2', '--batch-size', '8', '--width', WIDTH];

export async function bench(): Promise<void> {
  const missing = await needs();
  if (missing) {
    console.log(`https-split: skipped: ${missing}`);
    return;
  }
  const work = mkdtempSync(join(tmpdir(), 'dsa-bench-https-'));
  const s3 = new S3rver({
    port: 0,
    address: '127.0.0.1',
    silent: true,
    directory: join(work, 's3'),
    configureBuckets: [{ name: 'data', configs: [] }],
  });
  const s3Port = ((await s3.run()) as AddressInfo).port;
  const cert = join(work, 'cert.pem');
  const fronts: https.Server[] = [];
  try {
    await fill(s3Port);
    const key = join(work, 'key.pem');
    execFileSync('openssl', [
      ...['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '1', '-subj', '/CN=127.0.0.1'],
      ...['-addext', 'subjectAltName=IP:127.0.0.1', '-keyout', key, '-out', cert],
    ]);
    const tls = { key: readFileSync(key), cert: readFileSync(cert) };
    const far = await front(tls, s3Port, LATENCY_MS, fronts);
    const near = await front(tls, s3Port, 0, fronts);
    const env = { ...CREDENTIALS, AWS_CA_BUNDLE: cert, NODE_EXTRA_CA_CERTS: cert };
    const before = await truth(far, near, env);
    const out = join(work, 'profile.json');
    const run = await execa(
      process.execPath,
      [
        ...[CLI, 'profile', '--remote', 's3://data/train/', '--endpoint', far, '--out', out],
        ...['--precision', '5%', '--min-iterations', '40', '--max-iterations', '300'],
        ...['--', PYTHON, SCRIPT, '--endpoint', far, ...JOB, '--epochs', '100'],
      ],
      { reject: false, cwd: work, env },
    );
    if (run.exitCode !== 0) {
      console.log(
        `https-split: profile failed (exit ${run.exitCode}): ${run.stderr.split('\n').slice(-3).join(' | ')}`,
      );
      return;
    }
    const after = await truth(far, near, env);
    const profile = ProfileSchema.parse(JSON.parse(readFileSync(out, 'utf8')));
    const proofs = (['synthetic', 'cached', 'cold'] as const)
      .map((m) => `${m} ${profile.modes[m]?.state.proven ? 'proven' : 'NOT proven'}`)
      .join(', ');
    console.log(`${profile.cost?.launches} launch(es), ${profile.cost?.schedule}; ${proofs}`);
    const iterMs = profile.analysis?.iterMs?.mean ?? (before.iterMs + after.iterMs) / 2;
    console.log('part          the tool           without (before, after)   difference  margin    within');
    // The job's meter puts the step's slowdown beside the loader's workers in its compute; the tool in its prep stall
    // (the step alone is the synthetic mode's): the iterations, whole, are the same thing on both sides.
    const rows: [string, Estimate | null | undefined, keyof Truth][] = [
      ['compute', profile.analysis?.computeMs, 'computeMs'],
      ['prep stall', profile.analysis?.prepStallMs, 'prepMs'],
      ['fetch stall', profile.analysis?.fetchStallMs, 'fetchMs'],
      ['cached iter', profile.modes.cached?.summary?.iterMs, 'nearIterMs'],
      ['cold iter', profile.modes.cold?.summary?.iterMs, 'iterMs'],
    ];
    for (const [name, tool, part] of rows) {
      const plain = (before[part] + after[part]) / 2;
      const diff = tool ? Math.abs(tool.mean - plain) : null;
      const margin = Math.max(0.1 * plain, 0.03 * iterMs);
      console.log(
        `${name.padEnd(13)} ${(tool ? `${tool.mean.toFixed(1)} ± ${(tool.halfWidth ?? 0).toFixed(1)} ms` : '—').padEnd(18)} ` +
          `${`${before[part].toFixed(1)}, ${after[part].toFixed(1)} ms`.padEnd(25)} ` +
          `${diff === null ? '—'.padEnd(10) : `${diff.toFixed(1)} ms`.padEnd(10)}  ${`${margin.toFixed(1)} ms`.padEnd(8)}  ` +
          `${diff === null ? '—' : diff <= margin ? 'yes' : 'NO'}`,
      );
    }
  } finally {
    for (const f of fronts) f.close();
    await s3.close();
    rmSync(work, { recursive: true, force: true });
  }
}

/** What the job's own meter says without the tool, ms per iteration. */
interface Truth {
  iterMs: number;
  nearIterMs: number;
  computeMs: number;
  prepMs: number;
  fetchMs: number;
}

async function truth(far: string, near: string, env: Record<string, string>): Promise<Truth> {
  const cold = await plain(far, env);
  const cached = await plain(near, env);
  return {
    iterMs: cold.iterMs,
    nearIterMs: cached.iterMs,
    computeMs: mean([cold.iterMs - cold.waitMs, cached.iterMs - cached.waitMs]),
    prepMs: cached.waitMs,
    fetchMs: Math.max(0, cold.waitMs - cached.waitMs),
  };
}

/** The job run without the tool for 4 epochs; the first (its workers starting) left out. */
async function plain(endpoint: string, env: Record<string, string>): Promise<{ iterMs: number; waitMs: number }> {
  const run = await execa(PYTHON, [SCRIPT, '--endpoint', endpoint, ...JOB, '--epochs', '4'], { env });
  const epochs = [...run.stdout.matchAll(/([\d.]+) ms\/iter, mean data time per iteration: ([\d.]+) ms/g)].slice(1);
  return { iterMs: mean(epochs.map((m) => Number(m[1]))), waitMs: mean(epochs.map((m) => Number(m[2]))) };
}

/**
 * A TLS server in front of s3rver that holds each request `holdMs` first; with none, it answers each object's GET from
 * memory once s3rver answered it (a listing always goes to s3rver). Its URL.
 */
async function front(
  tls: { key: Buffer; cert: Buffer },
  s3Port: number,
  holdMs: number,
  fronts: https.Server[],
): Promise<string> {
  const kept = new Map<string, { headers: http.IncomingHttpHeaders; body: Buffer }>();
  const server = https.createServer(tls, (req, res) => {
    const memo = holdMs === 0 && req.method === 'GET' && !req.url?.includes('?') ? req.url : undefined;
    const hit = memo === undefined ? undefined : kept.get(memo);
    if (hit) {
      res.writeHead(200, hit.headers);
      return void res.end(hit.body);
    }
    const upstream = http.request(
      { host: '127.0.0.1', port: s3Port, method: req.method, path: req.url, headers: req.headers },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        const parts: Buffer[] = [];
        answer.on('data', (part: Buffer) => parts.push(part));
        answer.on('end', () => {
          if (memo !== undefined && answer.statusCode === 200)
            kept.set(memo, { headers: answer.headers, body: Buffer.concat(parts) });
        });
        answer.pipe(res);
      },
    );
    upstream.on('error', () => res.destroy());
    setTimeout(() => req.pipe(upstream), holdMs);
  });
  fronts.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `https://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function fill(s3Port: number): Promise<void> {
  await putObjects(`http://127.0.0.1:${s3Port}`, OBJECTS, () => OBJECT_BYTES);
}

async function needs(): Promise<string | null> {
  for (const [what, argv] of [
    ['torch and boto3', [PYTHON, '-c', 'import torch, boto3']],
    ['openssl', ['openssl', 'version']],
  ] as const) {
    if ((await execa(argv[0], argv.slice(1), { reject: false })).exitCode !== 0) return `needs ${what}`;
  }
  return null;
}
