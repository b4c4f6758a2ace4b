/**
 * Two "nodes" on one machine: two network namespaces joined by a veth pair,
 * each with its own host name and /etc/hosts (a private UTS and mount
 * namespace), its own dataset copy and its own CLI, running one torchrun
 * --nnodes 2 job (gloo, c10d rendezvous across the pair). Node 1's storage
 * is throttled, so it is the straggler. Needs root, ip, nsenter, unshare,
 * torch and a storage throttle; skipped with the reason otherwise.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { execa, execaSync, type ResultPromise } from 'execa';
import { ExitCode } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import { CLI, canThrottle, processesMentioning, sleep, startCli, torchMissing } from './helpers.js';

const TAG = `dsa${process.pid % 100000}`;
const NODES = [
  { ns: `${TAG}n0`, ifname: `${TAG}v0`, address: '10.213.7.1', hostname: 'dsa-node0' },
  { ns: `${TAG}n1`, ifname: `${TAG}v1`, address: '10.213.7.2', hostname: 'dsa-node1' },
] as const;

let work: string;
let skipReason: string | null = null;

/** Why two namespaced nodes cannot be made here, or null. */
async function blocker(): Promise<string | null> {
  if (process.getuid?.() !== 0) return 'needs root to make network namespaces';
  for (const tool of ['ip', 'nsenter', 'unshare', '/usr/bin/torchrun']) {
    if (execaSync('sh', ['-c', `command -v ${tool}`], { reject: false }).exitCode !== 0)
      return `needs ${tool} (iproute2, util-linux, python3-torch)`;
  }
  const torch = await torchMissing();
  if (torch) return torch;
  const throttle = await canThrottle();
  if (throttle) return `needs storage throttling: ${throttle}`;
  return null;
}

function sh(command: string): void {
  execaSync('sh', ['-c', command]);
}

before(async () => {
  skipReason = await blocker();
  if (skipReason) return;
  try {
    sh(`ip netns add ${NODES[0].ns} && ip netns add ${NODES[1].ns}`);
    sh(`ip link add ${NODES[0].ifname} type veth peer name ${NODES[1].ifname}`);
    for (const node of NODES) {
      sh(`ip link set ${node.ifname} netns ${node.ns}`);
      sh(
        `ip -n ${node.ns} addr add ${node.address}/24 dev ${node.ifname} && ip -n ${node.ns} link set ${node.ifname} up && ip -n ${node.ns} link set lo up`,
      );
    }
  } catch (error) {
    skipReason = `cannot make two network namespaces joined by a veth pair: ${(error as Error).message.split('\n')[0]}`;
    return;
  }
  work = mkdtempSync(join(tmpdir(), 'dsa-e2e-nodes-'));
  writeFileSync(
    join(work, 'hosts'),
    `127.0.0.1 localhost\n${NODES.map((n) => `${n.address} ${n.hostname}`).join('\n')}\n`,
  );
  writeFileSync(join(work, 'train.py'), TRAIN_PY);
  for (const k of [0, 1]) {
    const data = join(work, `node${k}`, 'data');
    mkdirSync(data, { recursive: true });
    for (let i = 0; i < 400; i++)
      writeFileSync(join(data, `f${String(i).padStart(4, '0')}.bin`), Buffer.alloc(64 * 1024, (i * 7 + k) % 251));
  }
});

after(() => {
  if (!work) return;
  for (const node of NODES) execaSync('ip', ['netns', 'del', node.ns], { reject: false });
  rmSync(work, { recursive: true, force: true });
});

// A data-parallel job that reads its files in one loader worker per rank, and
// meters its own iterations (the time from one step's end to the next's),
// printed at exit: the meter the tool's pace is checked against.
const TRAIN_PY = `
import atexit, json, os, sys, time, torch, torch.distributed as dist
from torch.utils.data import DataLoader, Dataset
from torch.utils.data.distributed import DistributedSampler
dist.init_process_group("gloo")
rank = dist.get_rank()
root = sys.argv[1]
with open(sys.argv[2], "a") as f: f.write("start rank %d\\n" % rank)
files = sorted(os.path.join(root, f) for f in os.listdir(root))
class Files(Dataset):
    def __len__(self): return len(files)
    def __getitem__(self, i):
        with open(files[i], "rb") as f: data = f.read()
        return torch.frombuffer(bytearray(data[:64]), dtype=torch.uint8).float()
sampler = DistributedSampler(Files())
loader = DataLoader(Files(), batch_size=8, sampler=sampler, num_workers=1)
model = torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(64, 2))
opt = torch.optim.SGD(model.parameters(), lr=0.01)
times = []
atexit.register(lambda: print("OWN_METER " + json.dumps({"rank": rank, "timesMs": [round(1000 * t, 3) for t in times]}), flush=True))
last = time.perf_counter()
for epoch in range(1000):
    sampler.set_epoch(epoch)
    for x in loader:
        opt.zero_grad(); model(x).sum().backward(); opt.step()
        time.sleep(0.02)
        now = time.perf_counter(); times.append(now - last); last = now
`;

/** Node k's CLI, in its namespaces, profiling the two-node job into <name>.json. */
function startNode(k: 0 | 1, name: string, extra: string[]): ResultPromise<{ reject: false; all: true }> {
  const node = NODES[k];
  const data = join(work, `node${k}`, 'data');
  const job = [
    '/usr/bin/torchrun',
    '--nnodes',
    '2',
    '--nproc_per_node',
    '1',
    '--rdzv_backend',
    'c10d',
    '--rdzv_endpoint',
    `${NODES[0].address}:29610`,
    '--rdzv_id',
    name,
    join(work, 'train.py'),
    data,
    // Each rank of each launch writes a line here: the job's starts, counted.
    join(work, `${name}.starts`),
  ];
  const cli = [
    process.execPath,
    CLI,
    'profile',
    '--data',
    data,
    '--out',
    join(work, `${name}.json`),
    '--precision',
    '10%',
    '--min-iterations',
    '20',
    '--max-iterations',
    '200',
    '--single-pass',
    ...extra,
    '--',
    ...job,
  ];
  const quoted = cli.map((arg) => `'${arg}'`).join(' ');
  return execa(
    'nsenter',
    [
      `--net=/run/netns/${node.ns}`,
      'unshare',
      '--uts',
      '--mount',
      'sh',
      '-c',
      `mount --bind ${join(work, 'hosts')} /etc/hosts && hostname ${node.hostname} && exec ${quoted}`,
    ],
    {
      // The two "nodes" share this machine's /tmp: each keeps its own registry of running profiles, as two machines do.
      env: {
        ...process.env,
        GLOO_SOCKET_IFNAME: node.ifname,
        PATH: `${process.env.PATH}`,
        DSA_RUN_REGISTRY: join(work, `runs-${node.ns}`),
      },
      reject: false,
      all: true,
      timeout: 600_000,
      cwd: work,
    },
  );
}

/**
 * The job's own meter of rank 0 in the launch of `mode` (its folder: `launch`), over the iterations the tool
 * measured (its warm-up left out on both sides): mean ms per iteration.
 */
function ownMeterMs(name: string, mode: string, measured: readonly number[], launch = mode): number {
  for (const k of [0, 1]) {
    const log = join(work, `${name}.${NODES[k].hostname}.d`, launch, 'stdout.log');
    for (const line of readFileSync(log, 'utf8').split('\n')) {
      if (!line.startsWith('OWN_METER ')) continue;
      const meter = JSON.parse(line.slice('OWN_METER '.length)) as { rank: number; timesMs: number[] };
      if (meter.rank !== 0) continue;
      const own = measured.filter((i) => i < meter.timesMs.length).map((i) => meter.timesMs[i]);
      assert.ok(own.length > 0, `the job metered its ${mode} iterations`);
      return own.reduce((a, b) => a + b, 0) / own.length;
    }
  }
  throw new Error(`no OWN_METER line of rank 0 in the ${mode} run`);
}

/** Both nodes' CLIs profiling the job into <name>.json, node 1's storage throttled; both must end well. */
async function profileTwo(name: string, extra: string[]) {
  const [r0, r1] = await Promise.all([
    startNode(0, name, extra),
    startNode(1, name, ['--storage-bw', '2MB/s', ...extra]),
  ]);
  assert.equal(r0.exitCode, ExitCode.Ok, r0.all);
  assert.equal(r1.exitCode, ExitCode.Ok, r1.all);
  return r0;
}

/** The lines the job's ranks wrote as they started, over every launch of profile <name>. */
function jobStarts(name: string): string[] {
  return readFileSync(join(work, `${name}.starts`), 'utf8')
    .trim()
    .split('\n')
    .sort();
}

test("two namespaced nodes under torchrun --nnodes 2, in one launch: modes switch together, the merged pace is the job's own, the throttled node is named as a launch per mode names it", async (t) => {
  if (skipReason) return t.skip(skipReason);
  const r0 = await profileTwo('two', []);
  // One launch on each node: each rank started once, and each node's profile says so.
  assert.deepEqual(jobStarts('two'), ['start rank 0', 'start rank 1']);
  for (const node of NODES) {
    const cost = readProfile(join(work, `two.${node.hostname}.json`)).cost!;
    assert.deepEqual([cost.schedule, cost.launches], ['one-launch', 1]);
  }
  const merged = readProfile(join(work, 'two.json'));
  assert.deepEqual([merged.cost!.schedule, merged.cost!.launches], ['one-launch', 1]);
  const { peerBytesPerSec: _measured, ...nodesOption } = merged.options.nodes!;
  assert.deepEqual(nodesOption, {
    count: 2,
    coordinator: `${NODES[0].address}:29611`,
    hostsCoordinator: true,
    merged: true,
  });
  assert.deepEqual(
    merged.nodes!.map((n) => [n.nodeRank, n.hostname]).sort(),
    [
      [0, 'dsa-node0'],
      [1, 'dsa-node1'],
    ].sort(),
  );
  // Each node proved its own state in each mode, and the merged state says so node by node.
  for (const node of NODES) {
    const own = readProfile(join(work, `two.${node.hostname}.json`));
    for (const mode of ['synthetic', 'cached', 'cold'] as const)
      assert.equal(own.modes[mode]!.state.proven, true, `${node.hostname} ${mode}: ${own.modes[mode]!.state.reason}`);
  }
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const result = merged.modes[mode]!;
    assert.equal(result.state.proven, true, result.state.reason);
    assert.deepEqual(result.ranks.map((r) => r.node!.hostname).sort(), ['dsa-node0', 'dsa-node1']);
    // The merged pace is the job's own: ranks in step at every all_reduce, metered by the job itself.
    const rank0 = result.ranks.find((r) => r.rank === 0)!;
    const measured = rank0.iterations.filter((it) => !it.warmup).map((it) => it.i);
    const own = ownMeterMs('two', mode, measured, 'launch-1');
    // The job's meter counts each epoch's boundary (the last epoch's workers shut down, iter(loader) starting
    // new ones: every 25 iterations here) in the epoch's first iteration; the tool times it apart (gapMs,
    // createMs: the boundary stall). Added back here.
    const inWindow = new Set(measured);
    const boundaryMs = (rank0.epochs ?? [])
      .filter((e) => inWindow.has(e.i))
      .reduce((sum, e) => sum + e.createMs + (e.gapMs ?? 0), 0);
    const pace = result.summary!.iterMs.mean + boundaryMs / measured.length;
    t.diagnostic(
      `${mode}: tool ${pace.toFixed(2)} ms (epoch boundaries ${(boundaryMs / measured.length).toFixed(2)}), job's own meter ${own.toFixed(2)} ms`,
    );
    assert.ok(
      Math.abs(pace - own) <= 0.07 * own,
      `${mode}: tool ${pace.toFixed(1)} ms, job's own meter ${own.toFixed(1)} ms`,
    );
  }
  const straggler = merged.analysis!.straggler!;
  assert.ok(straggler, 'a straggler is named');
  assert.equal(straggler.node!.hostname, 'dsa-node1');
  assert.equal(straggler.cause, 'fetch');
  assert.match(r0.stdout, /straggler: rank \d \(local rank 0 on node dsa-node1/);
  // The veth between the nodes, measured as the CLIs met, is what a partitioned cache's misses would cross.
  const peer = merged.nodes!.map((n) => n.peerBytesPerSec!);
  assert.ok(
    peer.every((rate) => rate > 10e6),
    `peer reads ${peer.join(', ')} bytes/s`,
  );
  const asked = await startCli(
    ['whatif', join(work, 'two.json'), '--nodes', '2', '--cache', '50%', '--cache-policy', 'partitioned', '--json'],
    { cwd: work },
  );
  assert.equal(asked.exitCode, ExitCode.Ok, asked.all);
  const answer = JSON.parse(asked.stdout) as {
    prediction: { scenario: { peerBytesPerSec: number } };
    nodes: { speedup: number };
  };
  assert.equal(answer.prediction.scenario.peerBytesPerSec, Math.min(...peer, merged.options.nodes!.peerBytesPerSec!));
  assert.deepEqual(processesMentioning(join(work, 'train.py')), []);
  // The same job, a launch per mode (the schedule before one launch on nodes): the same verdict and straggler.
  await profileTwo('apart', ['--separate-launches']);
  assert.equal(jobStarts('apart').length, 6, 'each rank started once a mode');
  const apart = readProfile(join(work, 'apart.json'));
  t.diagnostic(`one launch: ${merged.analysis!.verdict.text}; a launch per mode: ${apart.analysis!.verdict.text}`);
  assert.equal(merged.analysis!.verdict.bound, apart.analysis!.verdict.bound);
  const apartStraggler = apart.analysis!.straggler!;
  // Rank numbers are c10d's to hand out, in any order each launch: the node and the cause are what must agree.
  assert.deepEqual([straggler.node!.hostname, straggler.cause], [apartStraggler.node!.hostname, apartStraggler.cause]);
});

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
