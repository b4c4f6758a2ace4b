import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { generateDataset } from '../../src/emulator/generate-dataset.js';
import { readProfile } from '../../src/store/profile-store.js';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { fakeIo } from '../cli/fake-io.js';
import { emulatorArgv, FIXTURES, noStackTrace, processesMentioning, sleep, startCli } from './helpers.js';

const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-fail-'));
const data = join(work, 'data');
const fast = ['--batch-size', '4', '--workers', '2', '--compute-ms', '5', '--prep-ms', '1'];
const quickProfile = ['--single-pass', '--precision', '10%', '--min-iterations', '20', '--max-iterations', '200'];

before(async () => {
  await generateDataset(data, { files: 32, fileBytes: 32 << 10, seed: 3 });
});

test('a job crashing in the cold mode leaves the earlier modes in a valid partial profile and no process behind', async () => {
  const out = join(work, 'crash.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      ...quickProfile,
      '--',
      ...emulatorArgv(data, [...fast, '--crash-at-iteration', '15', '--crash-mode', 'cold']),
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
  assert.match(result.all, /the job exited with code 42 in cold mode; the synthetic and cached modes are saved/);
  noStackTrace(result.all);
  const profile = readProfile(out);
  assert.equal(profile.status, 'partial');
  assert.equal(profile.modes.synthetic?.status, 'ok');
  assert.equal(profile.modes.cached?.status, 'ok');
  assert.equal(profile.modes.cold?.status, 'failed');
  assert.ok(profile.analysis?.prepStallMs, 'the split of the measured modes is kept');
  assert.deepEqual(processesMentioning(data), []);
});

test('Ctrl-C mid-mode saves what was measured, exits 130 and leaves no process behind', async () => {
  const out = join(work, 'interrupt.json');
  const cli = startCli(
    // The job hangs in the cached mode after 30 iterations, so the interrupt lands mid-mode.
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      ...quickProfile,
      '--',
      ...emulatorArgv(data, [...fast, '--hang-at-iteration', '30', '--hang-mode', 'cached']),
    ],
    { cwd: work },
  );
  // One launch: the cached block has begun once the job's events say so.
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && !blockBegun(join(work, 'interrupt.d'), 'cached')) await sleep(200);
  assert.ok(blockBegun(join(work, 'interrupt.d'), 'cached'), 'the job reached its cached block');
  await sleep(1000);
  cli.kill('SIGINT');
  const result = await cli;
  assert.equal(result.exitCode, ExitCode.Interrupted, result.all);
  assert.match(result.all, /interrupted; the synthetic mode is saved/);
  noStackTrace(result.all);
  const profile = readProfile(out);
  assert.equal(profile.status, 'partial');
  assert.equal(profile.modes.synthetic?.status, 'ok');
  assert.equal(profile.modes.cached?.status, 'interrupted');
  assert.equal(profile.modes.cold, undefined);
  assert.deepEqual(processesMentioning(data), []);
});

test('a job that hangs is killed at the per-mode --timeout, with its whole tree', async () => {
  const out = join(work, 'timeout.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--timeout',
      '6s',
      ...quickProfile,
      '--',
      ...emulatorArgv(data, [...fast, '--hang-at-iteration', '3', '--hang-mode', 'synthetic']),
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
  assert.match(result.all, /the job hit the per-mode --timeout in synthetic mode/);
  const profile = readProfile(out);
  assert.equal(profile.modes.synthetic?.stopReason, 'timeout');
  assert.deepEqual(processesMentioning(data), []);
});

// The error paths below run the CLI in-process; the spawned one's is 'a missing --data path, spawned as a user would'.
test('a command that does not exist', async () => {
  const io = fakeIo(work);
  assert.equal(await run(['profile', '--data', data, '--', 'no-such-command-dsa'], io), ExitCode.CommandNotFound);
  const all = io.out + io.err;
  assert.equal(all.trim().split('\n').length, 1, all);
  assert.match(all, /command 'no-such-command-dsa' was not found/);
});

test('a corrupt events file', async () => {
  const io = fakeIo(work);
  const exitCode = await run(
    ['profile', '--data', data, '--modes', 'cached', '--', join(FIXTURES, 'corrupt-events-job.sh')],
    io,
  );
  const all = io.out + io.err;
  assert.equal(exitCode, ExitCode.CorruptFile, all);
  assert.match(all, /hold 2 line\(s\) and none is a protocol v1 event/);
  noStackTrace(all);
});

test('a missing --data path, spawned as a user would', async () => {
  const result = await startCli(['profile', '--data', join(work, 'missing'), '--', 'true'], { cwd: work });
  assert.equal(result.exitCode, ExitCode.MissingInput);
  assert.equal(result.all.trim().split('\n').length, 1, result.all);
  noStackTrace(result.all);
});

/** Whether a launch under `profileDir` has written the block event that begins `mode`. */
function blockBegun(profileDir: string, mode: string): boolean {
  if (!existsSync(profileDir)) return false;
  const eventFiles = readdirSync(profileDir, { recursive: true, encoding: 'utf8' }).filter((f) => f.endsWith('.jsonl'));
  return eventFiles.some((f) =>
    readFileSync(join(profileDir, f), 'utf8')
      .split('\n')
      .some((line) => line.includes('"type":"block"') && line.includes(`"mode":"${mode}"`)),
  );
}

/** A process's command line, its arguments joined by spaces; '' once it is gone. */
function commandLine(pid: number): string {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ');
  } catch {
    return '';
  }
}

// One run for both: a job that would notice its profiler gone is the easier case of this one (no exit hooks run
// here either).
test('a CLI killed with SIGKILL (no exit hooks run) leaves no job behind, even when the job would run on alone (a shell, a launcher like torchrun): its watchdog kills the group', async () => {
  const out = join(work, 'sigkill-shell.json');
  // A job that never notices its profiler is gone: a shell that waits in a child of its own.
  const cli = startCli(
    ['profile', '--data', data, '--out', out, ...quickProfile, '--', '/bin/sh', '-c', 'sleep 600; : "$0"', data],
    { cwd: work },
  );
  const shellRunning = () =>
    processesMentioning(data).find((pid) => commandLine(pid).startsWith('/bin/sh -c sleep 600'));
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline && shellRunning() === undefined) await sleep(100);
  const shell = shellRunning();
  assert.ok(shell !== undefined, 'the job is running');
  const group = processGroup(shell);
  assert.ok(membersOf(group).length >= 2, 'the shell and its sleep');
  cli.kill('SIGKILL');
  await cli;
  const gone = Date.now() + 5000;
  while (Date.now() < gone && (membersOf(group).length > 0 || processesMentioning(data).length > 0)) await sleep(100);
  assert.deepEqual(membersOf(group), [], "the job's whole group is killed by the watchdog");
  // Nothing else that was started for the data is left either: the watchdog and the CLI's helpers have ended too.
  assert.deepEqual(processesMentioning(data), []);
});

/** A process's group id. */
function processGroup(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** Live (not zombie) processes of a group. */
function membersOf(pgid: number): number[] {
  const members: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const fields = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const rest = fields.slice(fields.lastIndexOf(')') + 2).split(' ');
      if (rest[0] !== 'Z' && Number(rest[2]) === pgid) members.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return members;
}

test('remote data whose server starts dropping connections mid-run: the job fails in the cold mode, the synthetic mode stays saved, the failures are counted', async () => {
  // A shard server that answers HEADs (the listing) always and GETs until its budget is spent, then cuts every
  // connection.
  let gets = 0;
  const server = http.createServer((req, res) => {
    const name = basename(req.url ?? '');
    const path = join(data, name);
    if (!existsSync(path)) return void res.writeHead(404).end();
    if (req.method === 'GET' && ++gets > 60) return void req.socket.destroy();
    const body = readFileSync(path);
    res.writeHead(200, { 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const out = join(work, 'dropped.json');
    const names = readdirSync(data)
      .filter((n) => n.endsWith('.bin'))
      .sort();
    const pattern = `${base}/sample-{00000..${String(names.length - 1).padStart(5, '0')}}.bin`;
    const result = await startCli(
      // The emulator's job is Node, not Python: its requests are counted at the proxy.
      [
        'profile',
        '--remote',
        pattern,
        '--net-meter',
        'proxy',
        '--modes',
        'synthetic,cold',
        '--single-pass',
        '--out',
        out,
        ...quickProfile,
        '--',
        ...emulatorArgv(data, [...fast, '--remote-base', base]),
      ],
      { cwd: work },
    );
    assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
    assert.match(result.all, /in cold mode; the synthetic mode is saved/);
    noStackTrace(result.all);
    const profile = readProfile(out);
    assert.equal(profile.modes.synthetic?.status, 'ok');
    assert.equal(profile.modes.cold?.status, 'failed');
    const network = profile.modes.cold!.network!;
    assert.ok(
      network.failures > 0 || Object.keys(network.statuses).some((s) => Number(s) >= 500),
      `the cut connections were counted: ${JSON.stringify(network)}`,
    );
    assert.deepEqual(processesMentioning(data), []);
  } finally {
    server.closeAllConnections();
    server.close();
  }
});

test('a job that stops making progress mid-block is stopped as hung, long before --timeout; the modes before are kept', async () => {
  const out = join(work, 'hung.json');
  const started = Date.now();
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--timeout',
      '5m',
      '--hang-timeout',
      '3s',
      ...quickProfile,
      '--',
      ...emulatorArgv(data, [...fast, '--hang-at-iteration', '40', '--hang-mode', 'cached']),
    ],
    { cwd: work },
  );
  const sec = (Date.now() - started) / 1000;
  assert.ok(sec < 120, `took ${sec} s against a --timeout of 300 s per mode`);
  assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
  assert.match(
    result.all,
    /the cached block stalled: no iteration for [\d.]+ s from [\d.]+ s into the cached block, \d+x the median [\d.]+ s: the job looks hung; it is kept in the profile, marked stalled.*; find where the job waits/,
  );
  assert.match(result.all, /the synthetic mode is saved/);
  noStackTrace(result.all);
  const profile = readProfile(out);
  assert.equal(profile.status, 'partial');
  assert.equal(profile.modes.synthetic?.status, 'ok');
  assert.equal(profile.modes.synthetic?.stalled, undefined);
  assert.equal(profile.modes.cached?.stalled?.cause, 'hung');
  assert.equal(profile.modes.cached?.state.proven, false);
  assert.equal(profile.modes.cold, undefined, 'no mode runs after a stalled one');
  assert.notEqual(profile.analysis?.verdict.bound, 'compute');
  assert.deepEqual(processesMentioning(data), []);
});

test('remote data whose server freezes mid cold mode: the cold block is marked stalled with the time, never proven, exit 5', async () => {
  // A shard server that answers HEADs always and GETs until its budget is spent, then holds every GET unanswered.
  let gets = 0;
  const held: http.ServerResponse[] = [];
  const server = http.createServer((req, res) => {
    const path = join(data, basename(req.url ?? ''));
    if (!existsSync(path)) return void res.writeHead(404).end();
    if (req.method === 'GET' && ++gets > 60) return void held.push(res);
    const body = readFileSync(path);
    res.writeHead(200, { 'content-length': body.length });
    res.end(req.method === 'HEAD' ? undefined : body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    const out = join(work, 'frozen.json');
    const count = readdirSync(data).filter((n) => n.endsWith('.bin')).length;
    const pattern = `${base}/sample-{00000..${String(count - 1).padStart(5, '0')}}.bin`;
    const started = Date.now();
    const result = await startCli(
      [
        'profile',
        '--remote',
        pattern,
        '--net-meter',
        'proxy',
        '--modes',
        'synthetic,cold',
        '--out',
        out,
        // Long enough for the 10 s without a byte that a fetch stall needs; far under --timeout.
        '--hang-timeout',
        '15s',
        '--timeout',
        '5m',
        ...quickProfile,
        '--',
        ...emulatorArgv(data, [...fast, '--remote-base', base]),
      ],
      { cwd: work },
    );
    assert.ok((Date.now() - started) / 1000 < 150, 'ended long before --timeout');
    assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
    assert.match(result.all, /the cold block stalled: the endpoint sent nothing from [\d.]+ s into the cold block/);
    assert.doesNotMatch(result.all, /cold: .*state proven/);
    noStackTrace(result.all);
    const profile = readProfile(out);
    assert.equal(profile.status, 'partial');
    assert.equal(profile.modes.synthetic?.stalled, undefined);
    assert.equal(profile.modes.cold?.stalled?.cause, 'no-bytes');
    assert.equal(profile.modes.cold?.state.proven, false);
    assert.equal(profile.analysis?.fetchStallMs, null);
    assert.equal(profile.analysis?.verdict.bound, 'unknown');
    assert.deepEqual(processesMentioning(data), []);
  } finally {
    for (const res of held) res.socket?.destroy();
    server.closeAllConnections();
    server.close();
  }
});
