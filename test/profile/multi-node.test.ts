/**
 * A profile over several nodes, one CLI per node: the plan read from the
 * launcher, two CLIs kept in step over a real TCP link on loopback (each
 * with a fake mode runner: nothing is timed), the merged profile, and every
 * way a node can fail the others.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import { connect } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { ExitCode, UserError } from '../../src/errors.js';
import { firstHost, nodePlan, torchrunOptions, type NodePlan } from '../../src/profile/nodes/node-plan.js';
import { runProfile, type ProfileRunInput } from '../../src/profile/run-profile.js';
import type { ModeRunInput } from '../../src/profile/run-mode.js';
import type { ModeResult } from '../../src/schema/profile.js';
import { readProfile } from '../../src/store/profile-store.js';
import { fakeModeRunner, fakeProfileInput, type FakeJob } from './fake-mode-runner.js';
import { nodeProfilePath } from '../../src/cli/profile-action.js';
import { renderSummary } from '../../src/report/terminal.js';
import { renderMarkdown } from '../../src/report/markdown.js';
import { renderHtml } from '../../src/report/html.js';
import { freePort } from '../support/free-port.js';

describe('the node plan, from the launcher the user runs', () => {
  const torchrun = [
    'torchrun',
    '--nnodes',
    '2',
    '--nproc_per_node=8',
    '--rdzv_backend',
    'c10d',
    '--rdzv-endpoint',
    '10.0.0.1:29400',
    '--rdzv-id',
    'job7',
    'train.py',
    '--nnodes',
    '9',
  ];

  test("torchrun: its node count, its rendezvous host with the port above, its run id; the script's own flags are not torchrun's", () => {
    assert.deepEqual(nodePlan(torchrun, {}, {}), {
      nodes: 2,
      coordinator: { host: '10.0.0.1', port: 29401 },
      hostsCoordinator: null,
      from: 'torchrun',
      runId: 'job7',
    });
    assert.deepEqual(
      torchrunOptions(['python', '-m', 'torch.distributed.run', '--nnodes=3:3', '--master_addr', 'n0', 'x.py']),
      {
        nodes: 3,
        endpoint: { host: 'n0', port: 29500 },
      },
    );
    assert.equal(nodePlan(['torchrun', '--standalone', '--nproc_per_node', '2', 'x.py'], {}, {}), null);
    assert.equal(nodePlan(['python', 'train.py'], {}, {}), null);
  });

  test('Slurm: node count and node id from srun, the first host of the list, a port from the job id', () => {
    const env = {
      SLURM_PROCID: '1',
      SLURM_STEP_ID: '0',
      SLURM_JOB_ID: '123456',
      SLURM_NNODES: '4',
      SLURM_NODEID: '1',
      SLURM_JOB_NODELIST: 'gpu[07-10]',
      SLURM_NTASKS_PER_NODE: '1',
    };
    assert.deepEqual(nodePlan(['python', 'train.py'], env, {}), {
      nodes: 4,
      coordinator: { host: 'gpu07', port: 15000 + 3456 },
      hostsCoordinator: false,
      from: 'Slurm',
      runId: '123456',
    });
    assert.equal(nodePlan(['python', 'train.py'], { ...env, SLURM_NODEID: '0' }, {})!.hostsCoordinator, true);
    assert.deepEqual(
      nodePlan(['python', 'train.py'], { ...env, MASTER_ADDR: 'head', MASTER_PORT: '29500' }, {})!.coordinator,
      { host: 'head', port: 29501 },
    );
    assert.equal(firstHost('gpu[007-009,12],cpu1'), 'gpu007');
    assert.equal(firstHost('a1,a2'), 'a1');
    assert.equal(firstHost(''), null);
  });

  test('srun ds-analyzer profile -- python train.py: the step found from what srun sets, no flag of ours', () => {
    // What srun -N 2 --ntasks-per-node 1 sets on the second node of a 4-node allocation (sbatch -N 4): the step's
    // variables describe the step, the job's the allocation.
    const allocation = {
      SLURM_JOB_ID: '8812345',
      SLURM_JOBID: '8812345',
      SLURM_JOB_NUM_NODES: '4',
      SLURM_NNODES: '4',
      SLURM_JOB_NODELIST: 'gpu[101-104]',
      SLURM_NODELIST: 'gpu[101-104]',
      SLURM_TASKS_PER_NODE: '1(x4)',
      SLURM_NTASKS_PER_NODE: '1',
      SLURM_SUBMIT_DIR: '/home/u/run',
    };
    const step = {
      ...allocation,
      SLURM_STEP_ID: '0',
      SLURM_STEPID: '0',
      SLURM_STEP_NUM_NODES: '2',
      SLURM_STEP_NUM_TASKS: '2',
      SLURM_STEP_NODELIST: 'gpu[102-103]',
      SLURM_STEP_TASKS_PER_NODE: '1(x2)',
      SLURM_PROCID: '1',
      SLURM_LOCALID: '0',
      SLURM_NODEID: '1',
      SLURMD_NODENAME: 'gpu103',
    };
    assert.deepEqual(nodePlan(['python', 'train.py'], step, {}), {
      nodes: 2,
      coordinator: { host: 'gpu102', port: 15000 + 2345 },
      hostsCoordinator: false,
      from: 'Slurm',
      runId: '8812345',
    });
    assert.equal(
      nodePlan(['python', 'train.py'], { ...step, SLURM_PROCID: '0', SLURM_NODEID: '0' }, {})!.hostsCoordinator,
      true,
    );
    // The batch script itself (SLURM_PROCID 0, the allocation's 4 nodes, no step): a CLI typed there is one machine's,
    // not node 0 of 4 waiting for three profilers that never start.
    assert.equal(nodePlan(['python', 'train.py'], { ...allocation, SLURM_PROCID: '0', SLURM_NODEID: '0' }, {}), null);
    // One node under srun: nothing to meet.
    assert.equal(
      nodePlan(['python', 'train.py'], { ...step, SLURM_STEP_NUM_NODES: '1', SLURM_STEP_NODELIST: 'gpu102' }, {}),
      null,
    );
  });

  test('plans the nodes could not follow are refused in one line naming the fix', () => {
    const refused = (
      argv: string[],
      env: NodeJS.ProcessEnv,
      flags: Parameters<typeof nodePlan>[2],
      pattern: RegExp,
      code: ExitCode,
    ) =>
      assert.throws(
        () => nodePlan(argv, env, flags),
        (e: unknown) =>
          e instanceof UserError && e.exitCode === code && pattern.test(e.message) && !e.message.includes('\n'),
      );
    refused(['torchrun', '--nnodes', '1:4', 'x.py'], {}, {}, /fixed node count/, ExitCode.BadValue);
    refused(
      ['torchrun', '--nnodes', '2', '--rdzv-endpoint', 'localhost:29400', 'x.py'],
      {},
      {},
      /loopback/,
      ExitCode.BadValue,
    );
    refused(['python', 'x.py'], {}, { nnodes: 2 }, /--coordinator HOST:PORT/, ExitCode.Usage);
    refused(['python', 'x.py'], {}, { nnodes: 2, coordinator: '10.0.0.1' }, /not HOST:PORT/, ExitCode.BadValue);
    refused(['python', 'x.py'], {}, { coordinator: '10.0.0.1:5000' }, /needs a job on several nodes/, ExitCode.Usage);
    refused(
      ['python', 'x.py'],
      {
        SLURM_PROCID: '0',
        SLURM_STEP_ID: '0',
        SLURM_JOB_ID: '1',
        SLURM_NNODES: '2',
        SLURM_STEP_TASKS_PER_NODE: '8(x2)',
        SLURM_JOB_NODELIST: 'n[1-2]',
      },
      {},
      /--ntasks-per-node=1/,
      ExitCode.Usage,
    );
  });

  test("each node's own profile sits beside the merged one", () => {
    assert.equal(nodeProfilePath('/p/run.json', 'gpu-b'), '/p/run.gpu-b.json');
    assert.equal(nodeProfilePath('/p/run', 'a/b'), '/p/run.a_b.json');
  });
});

const BASE_JOB: Omit<FakeJob, 'seed'> = {
  waitMs: { synthetic: 0, cached: 5, cold: 10 },
  stepMs: { synthetic: 50, cached: 50, cold: 50 },
  driftPerSec: 0,
  noise: 0.02,
  startupSec: 1,
};

describe('two CLIs kept in step over a real TCP link', () => {
  let dir: string;
  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-multinode-'));
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  const planAt = (port: number, hosts: boolean): NodePlan => ({
    nodes: 2,
    coordinator: { host: '127.0.0.1', port },
    hostsCoordinator: hosts,
    from: '--nnodes',
    runId: 'test',
  });

  /** A node's input: its own profile as <name>.json, the merged one (the coordinator's) as merged.json. */
  const nodeInput = (
    name: string,
    plan: NodePlan,
    runner: ProfileRunInput['modeRunner'],
    overrides: Partial<ProfileRunInput> = {},
  ): ProfileRunInput =>
    fakeProfileInput(dir, name, runner, {
      modes: ['synthetic', 'cached', 'cold'],
      maxIterations: 120,
      minIterations: 20,
      nodes: {
        plan,
        timing: { arriveTimeoutSec: 10, silenceSec: 2, pingMs: 200 },
        mergedOutFile: path.join(dir, `${name}-merged.json`),
      },
      ...overrides,
    });

  /** Wraps a runner to log, per node, each run's label when the run starts (after the barrier) and ends. */
  const logged =
    (log: string[], node: string, run: (input: ModeRunInput) => Promise<unknown>) => async (input: ModeRunInput) => {
      const label = path.basename(input.modeDir);
      const result = await run({
        ...input,
        beforeJobStart: async () => {
          await input.beforeJobStart?.();
          log.push(`${node} starts ${label}`);
        },
      });
      log.push(`${node} ends ${label}`);
      return result as never;
    };

  test('both nodes run the schedule in step; the merged profile has every rank, the slow node sets the pace and is named', async () => {
    const port = await freePort();
    const log: string[] = [];
    const a = fakeModeRunner({ ...BASE_JOB, seed: 1, rank: 0, node: { hostname: 'node-a', nodeRank: 0 } });
    // Node b's loader waits 40 ms more in the cold mode: its storage is the slow one.
    const b = fakeModeRunner({
      ...BASE_JOB,
      waitMs: { synthetic: 0, cached: 5, cold: 50 },
      seed: 2,
      rank: 1,
      node: { hostname: 'node-b', nodeRank: 1 },
    });
    const [outA, outB] = await Promise.all([
      runProfile(nodeInput('a', planAt(port, true), logged(log, 'a', a.run)), { onSignal: () => () => {} }),
      runProfile(nodeInput('b', planAt(port, false), logged(log, 'b', b.run)), { onSignal: () => () => {} }),
    ]);
    assert.equal(outA.exitCode, ExitCode.Ok);
    assert.equal(outB.exitCode, ExitCode.Ok);
    // No node starts a run before every node has set its state for it, nor before every node ended the run before.
    const labels = a.calls.map((c) => c.label);
    assert.deepEqual(
      labels,
      b.calls.map((c) => c.label),
    );
    for (const label of labels) {
      const starts = Math.max(log.indexOf(`a starts ${label}`), log.indexOf(`b starts ${label}`));
      const previous = labels[labels.indexOf(label) - 1];
      if (previous)
        assert.ok(
          Math.min(log.indexOf(`a starts ${label}`), log.indexOf(`b starts ${label}`)) >
            Math.max(log.indexOf(`a ends ${previous}`), log.indexOf(`b ends ${previous}`)),
          log.join('\n'),
        );
      assert.ok(starts !== -1);
    }
    // The coordinator's CLI shows the merged profile; each node keeps its own.
    assert.equal(outA.path, path.join(dir, 'a-merged.json'));
    const merged = readProfile(outA.path);
    assert.equal(merged.status, 'complete');
    const { peerBytesPerSec, ...nodesOption } = merged.options.nodes!;
    assert.deepEqual(nodesOption, { count: 2, coordinator: '127.0.0.1:' + port, hostsCoordinator: true, merged: true });
    // The network between the two CLIs, measured as they met, is on every node's entry and in each own profile.
    assert.ok(peerBytesPerSec! > 1e6, `coordinator read ${peerBytesPerSec} bytes/s`);
    assert.ok(
      merged.nodes!.every((n) => n.peerBytesPerSec! > 1e6),
      JSON.stringify(merged.nodes!.map((n) => n.peerBytesPerSec)),
    );
    assert.deepEqual(
      merged.nodes!.map((n) => [n.nodeRank, n.profile]),
      [
        [0, path.join(dir, 'a.json')],
        [1, path.join(dir, 'b.json')],
      ],
    );
    assert.deepEqual(
      merged.modes.cold!.ranks.map((r) => [r.rank, r.node!.hostname]),
      [
        [0, 'node-a'],
        [1, 'node-b'],
      ],
    );
    assert.equal(merged.modes.cold!.paceRank, 1, 'the slow node sets the pace');
    assert.equal(merged.analysis!.straggler?.rank, 1);
    assert.equal(merged.analysis!.straggler?.node?.hostname, 'node-b');
    // The summary has a row per node: its host, its ranks, where its own profile is.
    const summary = renderSummary(merged, outA.path);
    assert.match(
      summary,
      new RegExp(
        `node 1\\s+${os.hostname().replace(/[.]/g, '\\.')}\\s+\\d+\\s+\\S+ \\S+\\s+\\d+\\s+1\\s+${path.join(dir, 'b.json').replace(/[.]/g, '\\.')}`,
      ),
    );
    assert.match(summary, /straggler \(fetch\)/);
    // The reports have the table too; a one-node profile's have none.
    const markdown = renderMarkdown({
      profile: merged,
      profilePath: outA.path,
      charts: [],
      pngFiles: {},
      whatIfNote: null,
      whatIfNotes: [],
    });
    assert.match(markdown, /## Nodes\n\n\|[^\n]*its own profile/);
    assert.ok(markdown.includes(path.join(dir, 'b.json')));
    const html = renderHtml({
      profile: merged,
      profilePath: outA.path,
      charts: [],
      whatIfNote: null,
      whatIfNotes: [],
      toolVersion: 'test',
    });
    assert.match(html, /<h2>Nodes<\/h2>/);
    const single = readProfile(path.join(dir, 'b.json'));
    assert.doesNotMatch(
      renderMarkdown({
        profile: single,
        profilePath: 'b.json',
        charts: [],
        pngFiles: {},
        whatIfNote: null,
        whatIfNotes: [],
      }),
      /## Nodes/,
    );
    const own = readProfile(path.join(dir, 'b.json'));
    assert.deepEqual(
      own.modes.cold!.ranks.map((r) => r.rank),
      [1],
    );
    assert.equal(own.options.nodes!.hostsCoordinator, false);
    assert.ok(own.options.nodes!.peerBytesPerSec! > 1e6);
    assert.equal(own.options.nodes!.merged, undefined);
    assert.ok(!fs.existsSync(path.join(dir, 'b-merged.json')), 'only the coordinator writes a merged profile');
  });

  test('a node with other options is refused at once, and both CLIs say why', async () => {
    const port = await freePort();
    const a = fakeModeRunner({ ...BASE_JOB, seed: 3, rank: 0 });
    const b = fakeModeRunner({ ...BASE_JOB, seed: 4, rank: 1 });
    const [outA, outB] = await Promise.allSettled([
      runProfile(nodeInput('c', planAt(port, true), a.run), { onSignal: () => () => {} }),
      runProfile(nodeInput('d', planAt(port, false), b.run, { precision: 0.02 }), { onSignal: () => () => {} }),
    ]);
    for (const out of [outA, outB]) {
      assert.equal(out.status, 'rejected');
      const error = (out as PromiseRejectedResult).reason;
      assert.ok(error instanceof UserError && error.exitCode === ExitCode.NodeLost, String(error));
      assert.match(error.message, /options differ from the first node's \(precision 0\.02 against 0\.05\)/);
    }
    assert.equal(a.calls.length + b.calls.length, 0, 'no run started');
  });

  test('a node that goes silent mid-profile ends the other within the silence bound, its measured modes saved', async () => {
    const port = await freePort();
    const a = fakeModeRunner({ ...BASE_JOB, seed: 5, rank: 0 });
    const started = Date.now();
    const coordinator = runProfile(nodeInput('e', planAt(port, true), a.run), { onSignal: () => () => {} });
    // A node that says hello with the same schedule, takes part in nothing, and then falls silent (a machine gone).
    const stranger = await helloThenSilence(port, dir, 'e');
    const outcome = await coordinator;
    stranger.destroy();
    assert.equal(outcome.exitCode, ExitCode.NodeLost);
    assert.match(outcome.nodeLost!, /left the profile: it was silent for 2 s/);
    assert.ok(Date.now() - started < 8000, `${Date.now() - started} ms`);
    assert.equal(readProfile(outcome.path).status, 'partial');
  });

  test('a coordinator that never comes ends the node with the fix named', async () => {
    const port = await freePort();
    const b = fakeModeRunner({ ...BASE_JOB, seed: 6, rank: 1 });
    await assert.rejects(
      runProfile(
        nodeInput('f', planAt(port, false), b.run, {
          nodes: {
            plan: planAt(port, false),
            timing: { arriveTimeoutSec: 1 },
            mergedOutFile: path.join(dir, 'f-merged.json'),
          },
        }),
        { onSignal: () => () => {} },
      ),
      (e: unknown) =>
        e instanceof UserError &&
        e.exitCode === ExitCode.NodeLost &&
        /no coordinator answered at 127\.0\.0\.1:\d+ within 1 s/.test(e.message),
    );
    assert.equal(b.calls.length, 0);
  });

  test("a node whose job fails ends every node's schedule after that run, and the others say it failed elsewhere", async () => {
    const port = await freePort();
    const a = fakeModeRunner({ ...BASE_JOB, seed: 7, rank: 0 });
    const b = fakeModeRunner({ ...BASE_JOB, seed: 8, rank: 1 });
    const failing = failingIn('cached', b.run);
    const [outA, outB] = await Promise.all([
      runProfile(nodeInput('g', planAt(port, true), a.run), { onSignal: () => () => {} }),
      runProfile(nodeInput('h', planAt(port, false), failing), { onSignal: () => () => {} }),
    ]);
    assert.equal(outB.exitCode, ExitCode.JobFailed);
    assert.equal(outB.nodeLost, undefined, 'its own job failed: its own log says why');
    assert.equal(outA.exitCode, ExitCode.JobFailed, 'the merged cached run failed');
    assert.equal(outA.nodeLost, undefined, 'the coordinator shows the merged profile, where the failed run is');
    assert.deepEqual(
      a.calls.map((c) => c.label),
      ['synthetic', 'cached'],
    );
    assert.deepEqual(
      b.calls.map((c) => c.label),
      ['synthetic', 'cached'],
    );
    assert.equal(readProfile(outA.path).modes.cached!.status, 'failed');
  });

  test("where the job fails on the coordinator's node, the other node stops after that run and says it failed elsewhere", async () => {
    const port = await freePort();
    const a = fakeModeRunner({ ...BASE_JOB, seed: 9, rank: 0 });
    const b = fakeModeRunner({ ...BASE_JOB, seed: 10, rank: 1 });
    const failing = failingIn('synthetic', a.run);
    const [outA, outB] = await Promise.all([
      runProfile(nodeInput('i', planAt(port, true), failing), { onSignal: () => () => {} }),
      runProfile(nodeInput('j', planAt(port, false), b.run), { onSignal: () => () => {} }),
    ]);
    assert.equal(outA.exitCode, ExitCode.JobFailed);
    assert.equal(outB.exitCode, ExitCode.JobFailed);
    assert.match(outB.nodeLost!, /the synthetic run did not end well on another node/);
    assert.deepEqual(
      b.calls.map((c) => c.label),
      ['synthetic'],
    );
  });
});

/** A runner whose job fails (exit 1) in `mode`, the other modes run as `run` runs them. */
function failingIn(mode: ModeRunInput['mode'], run: (input: ModeRunInput) => Promise<ModeResult>) {
  return async (input: ModeRunInput): Promise<ModeResult> => {
    const result = await run(input);
    return input.mode === mode ? { ...result, status: 'failed', stopReason: 'job-failed', jobExitCode: 1 } : result;
  };
}

/** A raw client that joins as a node (the coordinator's own schedule), then never speaks again. */
async function helloThenSilence(port: number, dir: string, name: string): Promise<import('node:net').Socket> {
  const own = readProfileWhenWritten(path.join(dir, `${name}.json`));
  const profile = await own;
  const socket = connect({ host: '127.0.0.1', port });
  await new Promise((resolve) => socket.once('connect', resolve));
  const schedule = JSON.stringify({
    modes: profile.options.modes,
    precision: 0.05,
    minIterations: 20,
    maxIterations: 120,
    cpuSweep: [],
    workersSweep: [],
    passes: 2,
  });
  socket.write(
    JSON.stringify({
      t: 'hello',
      hello: {
        version: profile.tool.version,
        schedule,
        runId: 'test',
        host: profile.host,
        dataset: { files: profile.dataset.files, bytes: profile.dataset.bytes },
      },
      profilePath: '/elsewhere.json',
    }) + '\n',
  );
  // It takes part in the network probe as a node does (a bulk acknowledged, a bulk sent when asked), then says nothing
  // more.
  let buffer = Buffer.alloc(0);
  let bulk = 0;
  let skip = 0;
  let measured = false;
  socket.on('data', (chunk: Buffer) => {
    buffer = Buffer.concat([buffer, chunk]);
    while (!measured) {
      if (skip > 0) {
        const take = Math.min(skip, buffer.length);
        buffer = buffer.subarray(take);
        skip -= take;
        if (skip > 0) return;
        socket.write(JSON.stringify({ t: 'bulk-ack', bytes: bulk }) + '\n');
        continue;
      }
      const end = buffer.indexOf(10);
      if (end === -1) return;
      const message = JSON.parse(buffer.subarray(0, end).toString()) as { t: string; bytes?: number };
      buffer = buffer.subarray(end + 1);
      if (message.t === 'bulk') bulk = skip = message.bytes!;
      else if (message.t === 'bulk-request') {
        socket.write(JSON.stringify({ t: 'bulk', bytes: message.bytes }) + '\n');
        socket.write(Buffer.alloc(message.bytes!));
      } else if (message.t === 'peer-bw') measured = true;
    }
  });
  return socket;
}

/** The node's own profile, once its CLI has written it (it does before it meets the others). */
async function readProfileWhenWritten(file: string) {
  for (let k = 0; k < 100; k++) {
    if (fs.existsSync(file)) return readProfile(file);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`${file} never written`);
}
