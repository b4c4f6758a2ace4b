import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmdirSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { execa } from 'execa';
import {
  cgroupV2Mount,
  groupAt,
  parseCounter,
  socketCounterObstacle,
  SocketCounter,
} from '../../../src/system/network/socket-counter.js';

test('a counter reading turns IP packets into payload: 52 header bytes a packet (IPv4, TCP timestamps)', () => {
  const json = JSON.stringify({
    nftables: [
      { metainfo: { version: '1.0.6' } },
      { counter: { family: 'inet', name: 'rx', table: 't', handle: 3, packets: 3054, bytes: 100159236 } },
    ],
  });
  assert.deepEqual(parseCounter(json), { bytes: 100159236, packets: 3054, payloadBytes: 100159236 - 3054 * 52 });
  assert.throws(() => parseCounter(JSON.stringify({ nftables: [{ metainfo: {} }] })), /no counter/);
});

test('a group is named to nftables relative to /sys/fs/cgroup, with its depth in the v2 hierarchy', () => {
  // A hybrid machine mounts v2 at /sys/fs/cgroup/unified; a v2-only one at /sys/fs/cgroup.
  assert.deepEqual(groupAt('/ds-analyzer-fuse-7', '/sys/fs/cgroup/unified'), {
    path: '/ds-analyzer-fuse-7',
    dir: '/sys/fs/cgroup/unified/ds-analyzer-fuse-7',
    nftPath: 'unified/ds-analyzer-fuse-7',
    level: 1,
  });
  assert.deepEqual(groupAt('/system.slice/rclone.service', '/sys/fs/cgroup'), {
    path: '/system.slice/rclone.service',
    dir: '/sys/fs/cgroup/system.slice/rclone.service',
    nftPath: 'system.slice/rclone.service',
    level: 2,
  });
});

test("the kernel counts the bytes a group's sockets receive, and none of another process's", async (t) => {
  const obstacle = await socketCounterObstacle();
  if (obstacle) return t.skip(obstacle);
  const v2 = cgroupV2Mount()!;
  const group = groupAt(`/ds-analyzer-test-${process.pid}`, v2);
  mkdirSync(group.dir);
  const body = Buffer.alloc(3_000_000, 7);
  const server = http.createServer((_req, res) => res.end(body));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
  const counter = await SocketCounter.start([group]);
  try {
    const before = counter.readNow();
    // A download from inside the group, then one from this process (outside it).
    const inside = await execa('sh', [
      '-c',
      `echo $$ > ${join(group.dir, 'cgroup.procs')} && exec curl -s -o /dev/null -w '%{size_download}' ${url}`,
    ]);
    assert.equal(Number(inside.stdout), body.length);
    await new Promise<void>((resolve) => http.get(url, (res) => res.resume().on('end', resolve)));
    const after = await counter.read();
    const payload = after.payloadBytes - before.payloadBytes;
    // The body, its headers and whatever TCP sent again (the counter counts what arrived: a busy machine retransmits,
    // seen once at +6%); never the second download, which would double it.
    assert.ok(
      payload >= body.length && payload < body.length * 1.1,
      `counted ${payload} bytes for a ${body.length}-byte body`,
    );
  } finally {
    await counter.close();
    server.close();
    rmdirSync(group.dir);
  }
  const tables = await execa('nft', ['list', 'tables', 'inet']);
  assert.doesNotMatch(tables.stdout, new RegExp(counter.table), 'the table is removed on close');
  assert.equal(existsSync(group.dir), false);
});
