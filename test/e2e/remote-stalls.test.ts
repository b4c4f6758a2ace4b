import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execa } from 'execa';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { emulatorArgv, noStackTrace, PYTHON, seen, sleep, startCli } from './helpers.js';
import { freePort } from '../support/free-port.js';

/**
 * Remote data whose endpoint stops answering, or whose download the user
 * interrupts, under the real CLI: the emulated job reads local files (what
 * is tested is the profiler's own network waits, not the job's), the
 * profiler lists and downloads real objects from a real server. The cold
 * mode runs first, so that it is measured and saved before the cached
 * mode's download meets the fault.
 */
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-stalls-'));
const data = join(work, 'data');
const objects = join(work, 'objects');
const OBJECTS = 8;
const OBJECT_BYTES = 256 * 1024;
const fast = ['--batch-size', '4', '--workers', '2', '--compute-ms', '5', '--prep-ms', '1'];
// --net-meter proxy keeps a launch a mode, so the cold mode is measured and saved before the cached mode's download
// (in one launch the copy is fetched while the cold block runs: test/profile/remote-fill.test.ts holds that download's
// deadline and interrupt).
const quick = [
  '--modes',
  'cold,cached',
  '--single-pass',
  '--precision',
  '10%',
  '--min-iterations',
  '20',
  '--net-meter',
  'proxy',
];
/** The deadline of every network wait in these runs, s. */
const DEADLINE_SEC = 2;

before(async () => {
  await generateDataset(data, { files: 32, fileBytes: 32 << 10, seed: 5 });
  mkdirSync(objects);
  for (let k = 0; k < OBJECTS; k++) writeFileSync(join(objects, `obj-${k}.bin`), Buffer.alloc(OBJECT_BYTES, k));
});

after(() => rmSync(work, { recursive: true, force: true }));

test('an endpoint stopped (SIGSTOP) before the download: exit 8 within the deadline, one line naming it, the cold mode saved', async (t) => {
  const port = await freePort();
  const server = execa(PYTHON, ['-m', 'http.server', '--bind', '127.0.0.1', '--directory', objects, String(port)], {
    reject: false,
  });
  const base = `http://127.0.0.1:${port}`;
  try {
    for (
      let k = 0;
      k < 50 &&
      !(await fetch(`${base}/obj-0.bin`, { method: 'HEAD' }).then(
        (r) => r.ok,
        () => false,
      ));
      k++
    )
      await sleep(100);
    const out = join(work, 'stopped.json');
    const cli = startCli(
      [
        'profile',
        '--remote',
        `${base}/obj-{0..${OBJECTS - 1}}.bin`,
        '--out',
        out,
        ...quick,
        '--',
        ...emulatorArgv(data, fast),
      ],
      { cwd: work, env: { DSA_NET_DEADLINE_SEC: String(DEADLINE_SEC) } },
    );
    // Listed: the server is stopped as the cold mode starts, so the cached mode's download meets it.
    await seen(cli, /cold: starting the job/);
    process.kill(server.pid!, 'SIGSTOP');
    const stoppedAt = performance.now();
    const result = await cli;
    const sec = (performance.now() - stoppedAt) / 1000;
    t.diagnostic(`exit ${result.exitCode} ${sec.toFixed(1)} s after SIGSTOP; stderr:\n${result.stderr}`);
    assert.equal(result.exitCode, ExitCode.Environment, result.all);
    const line = new RegExp(
      `^ds-analyzer: fetching ${base.replace(/\./g, '\\.')}/obj-\\d\\.bin: the endpoint stopped answering ` +
        `\\(nothing for ${DEADLINE_SEC} s\\): [^\\n]*; the cold mode is saved in ${out}$`,
      'm',
    );
    assert.match(result.stderr, line);
    noStackTrace(result.all);
    // The cold mode itself runs for seconds; the stall adds the deadline.
    assert.ok(sec < 60, `${sec.toFixed(1)} s after the stop`);
    const profile = readProfile(out);
    assert.equal(profile.status, 'partial');
    assert.equal(profile.modes.cold?.status, 'ok');
    assert.equal(profile.modes.cached, undefined);
    assert.ok(!existsSync(join(work, 'stopped.d', 'remote-cache')), 'the partial download removed');
  } finally {
    if (server.pid) process.kill(server.pid, 'SIGCONT');
    server.kill();
    await server;
  }
});

test('Ctrl-C during the download stops it within a second: exit 130, the cold mode saved, the partial download removed', async (t) => {
  // 4 KiB every 100 ms: each object takes about 6 s, so the interrupt lands mid-download.
  const sockets = new Set<net.Socket>();
  // Every writer's timer, cleared at the end whatever happened: one left running would keep this file from ending.
  const timers = new Set<NodeJS.Timeout>();
  const server = http.createServer((req, res) => {
    res.writeHead(200, { 'content-length': OBJECT_BYTES, 'content-type': 'application/octet-stream' });
    if (req.method === 'HEAD') return void res.end();
    sockets.add(req.socket);
    req.socket.on('close', () => sockets.delete(req.socket));
    const timer = setInterval(() => res.write(Buffer.alloc(4096, 1)), 100);
    timers.add(timer);
    res.on('close', () => clearInterval(timer));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
  try {
    const out = join(work, 'interrupted.json');
    const cli = startCli(
      [
        'profile',
        '--remote',
        `${base}/obj-{0..${OBJECTS - 1}}.bin`,
        '--out',
        out,
        ...quick,
        '--',
        ...emulatorArgv(data, fast),
      ],
      { cwd: work },
    );
    await seen(
      cli,
      // The download's first line: its progress (the cached mode's copy in one launch is announced once its first
      // part measured the rate), or its start (a launch a mode fetches the copy in one part).
      /^(download {2}[\d.]+ [KM]?i?B\/|local copy: downloading .* from http:\/\/127\.0\.0\.1:\d+\/obj-\{0\.\.7\}\.bin)/m,
    );
    await sleep(500);
    assert.ok(sockets.size > 0, 'the download is under way');
    const interruptedAt = performance.now();
    cli.kill('SIGINT');
    const result = await cli;
    const sec = (performance.now() - interruptedAt) / 1000;
    t.diagnostic(`exit ${result.exitCode} ${sec.toFixed(2)} s after Ctrl-C; stderr:\n${result.stderr}`);
    assert.equal(result.exitCode, ExitCode.Interrupted, result.all);
    assert.match(result.stderr, /ds-analyzer: interrupted; the cold mode is saved in /);
    noStackTrace(result.all);
    // The download ends at once; the CLI then closes its proxy and saves the profile.
    assert.ok(sec < 2, `exited ${sec.toFixed(2)} s after Ctrl-C`);
    assert.equal(sockets.size, 0, "the download's requests are closed");
    assert.equal(readProfile(out).modes.cold?.status, 'ok');
    assert.ok(!existsSync(join(work, 'interrupted.d', 'remote-cache')), 'the partial download removed');
  } finally {
    for (const timer of timers) clearInterval(timer);
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
});
