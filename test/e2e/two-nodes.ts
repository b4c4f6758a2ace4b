/**
 * Two "nodes" on one machine, shared by multi-node.test.ts (alone) and multi-node-kill.test.ts (side by side): two
 * network namespaces joined by a veth pair, each with its own host name and /etc/hosts (a private UTS and mount
 * namespace), its own dataset copy and its own CLI, running one torchrun --nnodes 2 job (gloo, c10d rendezvous across
 * the pair). Needs root, ip, nsenter, unshare, torch and a storage throttle; skipped with the reason otherwise.
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before } from 'node:test';
import { execa, execaSync, type ResultPromise } from 'execa';
import { ExitCode } from '../../src/errors.js';
import { CLI, canThrottle, torchMissing } from './helpers.js';

const TAG = `dsa${process.pid % 100000}`;
export const NODES = [
  { ns: `${TAG}n0`, ifname: `${TAG}v0`, address: '10.213.7.1', hostname: 'dsa-node0' },
  { ns: `${TAG}n1`, ifname: `${TAG}v1`, address: '10.213.7.2', hostname: 'dsa-node1' },
] as const;

/** The nodes' folder: datasets, hosts file, train.py, profiles (set by useTwoNodes' before hook). */
export let work: string;
/** Why two nodes cannot be made here, or null (set by useTwoNodes' before hook). */
export let skipReason: string | null = null;

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

/** Makes the two nodes before the file's tests, and removes them after. */
export function useTwoNodes(): void {
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
}

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
export function startNode(k: 0 | 1, name: string, extra: string[]): ResultPromise<{ reject: false; all: true }> {
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

/** Both nodes' CLIs profiling the job into <name>.json, node 1's storage throttled; both must end well. */
export async function profileTwo(name: string, extra: string[]) {
  const [r0, r1] = await Promise.all([
    startNode(0, name, extra),
    startNode(1, name, ['--storage-bw', '2MB/s', ...extra]),
  ]);
  assert.equal(r0.exitCode, ExitCode.Ok, r0.all);
  assert.equal(r1.exitCode, ExitCode.Ok, r1.all);
  return r0;
}
