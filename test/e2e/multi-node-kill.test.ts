/**
 * Two namespaced nodes (two-nodes.ts) under one torchrun --nnodes 2 job, one node's CLI killed mid-profile: the other
 * ends with exit 10, its measured modes saved, nothing left running. Behaviour, bounded loosely in time (a minute), so
 * this file runs side by side (scripts/test-plan.ts).
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { execaSync } from 'execa';
import { ExitCode } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import { processesMentioning, sleep } from './helpers.js';
import { NODES, skipReason, startNode, useTwoNodes, work } from './two-nodes.js';

useTwoNodes();

/** Whether node 1's job of profile <name> runs its cached mode: in a launch of its own, or switched to it in one. */
function inCachedMode(name: string, oneLaunch: boolean): boolean {
  const d = join(work, `${name}.${NODES[1].hostname}.d`);
  if (!oneLaunch) return existsSync(join(d, 'cached', 'stdout.log'));
  const events = join(d, 'launch-1', 'events');
  if (!existsSync(events)) return false;
  return readdirSync(events).some((f) => readFileSync(join(events, f), 'utf8').includes('"type":"block","t"'));
}

for (const oneLaunch of [false, true])
  test(`killing one node's CLI ends the other with exit 10 in bounded time, its measured modes saved, nothing left running (${oneLaunch ? 'one launch' : 'a launch per mode'})`, async (t) => {
    if (skipReason) return t.skip(skipReason);
    await killOneNode(oneLaunch ? 'killed-one' : 'killed', oneLaunch ? [] : ['--separate-launches'], oneLaunch);
  });

async function killOneNode(name: string, extra: string[], oneLaunch: boolean): Promise<void> {
  const node0 = startNode(0, name, extra);
  const node1 = startNode(1, name, ['--storage-bw', '2MB/s', ...extra]);
  // Kill the coordinator's CLI once both nodes run their cached mode (the synthetic one is then measured).
  const deadline = Date.now() + 120_000;
  while (Date.now() < deadline && !inCachedMode(name, oneLaunch)) await sleep(200);
  assert.ok(inCachedMode(name, oneLaunch), 'node 1 reached the cached mode');
  await sleep(2000);
  const killedAt = Date.now();
  node0.kill('SIGKILL');
  const r1 = await node1;
  const tookSec = (Date.now() - killedAt) / 1000;
  await node0;
  assert.equal(r1.exitCode, ExitCode.NodeLost, r1.all);
  // A killed process's socket closes with a FIN, or with a reset when data it had not read was waiting. The kill
  // comes 2 s into the cached mode: a short cached block may be measured by then.
  assert.match(
    r1.stderr,
    /ds-analyzer: the coordinator at 10\.213\.7\.1:29611 is gone: its connection (closed|failed \(read ECONNRESET\)); the synthetic (mode is|and cached modes are) saved in/,
  );
  assert.ok(tookSec < 60, `node 1 ended ${tookSec.toFixed(1)} s after node 0 was killed`);
  const own = readProfile(join(work, `${name}.${NODES[1].hostname}.json`));
  assert.equal(own.status, 'partial');
  assert.equal(own.modes.synthetic!.status, 'ok');
  // No job, and no throttle group of node 1's CLI, left behind.
  const gone = Date.now() + 15_000;
  while (Date.now() < gone && processesMentioning(join(work, 'train.py')).length > 0) await sleep(200);
  assert.deepEqual(processesMentioning(join(work, 'train.py')).map(describeProcess), []);
  const groups = execaSync(
    'sh',
    ['-c', `find /sys/fs/cgroup -maxdepth 4 -name 'ds-analyzer-${node1.pid}' 2>/dev/null`],
    { reject: false },
  ).stdout;
  assert.equal(groups.trim(), '', 'node 1 removed its throttle');
}

/** A process as a failure message shows it: its pid, parent and command line. */
function describeProcess(pid: number): string {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1];
    return `${pid} (parent ${ppid}): ${readFileSync(`/proc/${pid}/cmdline`, 'utf8').replaceAll('\0', ' ')}`;
  } catch {
    return `${pid} (gone)`;
  }
}
