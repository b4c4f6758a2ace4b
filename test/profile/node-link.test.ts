// The link's own deadlines (node-link.ts waitWithin): a coordinator whose nodes never all come, and a node whose
// coordinator takes the connection but never answers, each end with the line that names the fix, not a hang.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { CoordinatorLink } from '../../src/profile/nodes/coordinator-link.js';
import { FollowerLink } from '../../src/profile/nodes/follower-link.js';
import { NodeLostError, type NodeHello } from '../../src/profile/nodes/node-link.js';
import type { NodePlan } from '../../src/profile/nodes/node-plan.js';
import type { Host } from '../../src/schema/profile.js';
import { freePort } from '../support/free-port.js';

const HELLO: NodeHello = {
  version: '0.0.0',
  schedule: '{}',
  runId: 'test',
  host: { hostname: 'here' } as Host,
  dataset: { files: 1, bytes: 1 },
};

const planAt = (port: number, hosts: boolean): NodePlan => ({
  nodes: 2,
  coordinator: { host: '127.0.0.1', port },
  hostsCoordinator: hosts,
  from: '--nnodes',
  runId: 'test',
});

test('a coordinator whose other node never comes ends after --nodes-timeout, naming how many came', async () => {
  const started = Date.now();
  await assert.rejects(
    CoordinatorLink.open(planAt(await freePort(), true), HELLO, { arriveTimeoutSec: 1 }),
    (e: unknown) =>
      e instanceof NodeLostError &&
      /^only 1 of 2 nodes reached the meeting point 127\.0\.0\.1:\d+ within 1 s: .*raise --nodes-timeout$/.test(
        e.message,
      ),
  );
  assert.ok(Date.now() - started < 5000, `${Date.now() - started} ms`);
});

test('a node whose coordinator takes the connection but never answers ends after --nodes-timeout', async () => {
  const sockets: Socket[] = [];
  const server = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as { port: number }).port;
  try {
    await assert.rejects(
      FollowerLink.open(planAt(port, false), HELLO, '/tmp/p.json', { arriveTimeoutSec: 1 }),
      (e: unknown) =>
        e instanceof NodeLostError && e.message === `the coordinator at 127.0.0.1:${port} did not answer within 1 s`,
    );
  } finally {
    for (const socket of sockets) socket.destroy();
    server.close();
  }
});
