// How many nodes a profile spans and where their CLIs meet: the flags (--nnodes, --coordinator), else torchrun's
// options in the job's command, else Slurm's variables under srun. Pure: nothing is resolved or opened.
import { ExitCode, UserError } from '../../errors.js';
import { NODES_TEXT } from './nodes-text.js';
import { parsePort } from '../../units.js';

/** The nodes' meeting point: a small coordinator the CLI on one node hosts, the others dial. */
export interface CoordinatorAddress {
  host: string;
  port: number;
}

/** A profile over several nodes: one CLI per node, each running the same schedule. */
export interface NodePlan {
  /** Nodes in the job, each running one CLI (2 or more). */
  nodes: number;
  /** Where the CLIs meet. */
  coordinator: CoordinatorAddress;
  /** Whether this CLI hosts the coordinator (Slurm's node 0); null: the one whose machine holds its address. */
  hostsCoordinator: boolean | null;
  /** Where the plan came from, for messages: '--nnodes', 'torchrun', 'Slurm'. */
  from: string;
  /** Names this run of the job, so two jobs' CLIs meeting on one port tell each other apart ('' when unknown). */
  runId: string;
}

/** The flags of `profile` that set the plan by hand. */
export interface NodeFlags {
  nnodes?: number;
  coordinator?: string;
}

/** torchrun's default c10d rendezvous port and static master port (torch.distributed.run). */
const TORCHRUN_RDZV_PORT = 29400;
const TORCHRUN_MASTER_PORT = 29500;
/** Under Slurm without MASTER_PORT: 15000 + the job id's last 4 digits, as Lightning picks its own. */
const SLURM_PORT_BASE = 15000;

/**
 * The plan for this CLI, or null for one node; the coordinator listens one port above the job's rendezvous unless
 * --coordinator names one. A UserError for a plan the CLIs could not follow (an elastic range, a loopback coordinator,
 * srun with several tasks per node).
 */
export function nodePlan(argv: readonly string[], env: NodeJS.ProcessEnv, flags: NodeFlags): NodePlan | null {
  const torchrun = torchrunOptions(argv);
  const slurm = slurmStep(env);
  const nodes = flags.nnodes ?? torchrun?.nodes ?? slurm?.nodes ?? 1;
  if (nodes <= 1) {
    if (flags.coordinator) throw new UserError(NODES_TEXT.coordinatorAlone, ExitCode.Usage);
    return null;
  }
  if (slurm && slurm.tasksPerNode > 1 && !torchrun) {
    throw new UserError(NODES_TEXT.tasksPerNode(slurm.tasksPerNode), ExitCode.Usage);
  }
  const from = flags.nnodes !== undefined ? '--nnodes' : torchrun?.nodes !== undefined ? 'torchrun' : 'Slurm';
  const address = flags.coordinator
    ? parseAddress(flags.coordinator, '--coordinator', null)
    : torchrun?.endpoint
      ? { host: torchrun.endpoint.host, port: torchrun.endpoint.port + 1 }
      : (slurm?.coordinator ?? null);
  if (!address) {
    throw new UserError(NODES_TEXT.noAddress(nodes), ExitCode.Usage);
  }
  if (isLoopback(address.host)) {
    throw new UserError(NODES_TEXT.loopback(address.host), ExitCode.BadValue);
  }
  return {
    nodes,
    coordinator: address,
    hostsCoordinator: !flags.coordinator && !torchrun?.endpoint && slurm ? slurm.nodeId === 0 : null,
    from,
    runId: torchrun?.runId ?? slurm?.jobId ?? '',
  };
}

/** What the job's torchrun options say about its nodes; null when the job is not launched by torchrun. */
interface TorchrunNodes {
  nodes?: number;
  endpoint?: CoordinatorAddress;
  runId?: string;
}

/** torchrun's options before the script: `torchrun`, `python -m torch.distributed.run` (or .launch). */
export function torchrunOptions(argv: readonly string[]): TorchrunNodes | null {
  const at = launcherIndex(argv);
  if (at === null) return null;
  const options = new Map<string, string>();
  const flagsOnly = new Set<string>();
  for (let k = at; k < argv.length; k++) {
    const arg = argv[k];
    if (!arg.startsWith('--')) break; // the script: what follows is the job's own
    const eq = arg.indexOf('=');
    const name = (eq === -1 ? arg.slice(2) : arg.slice(2, eq)).replaceAll('_', '-');
    if (eq !== -1) options.set(name, arg.slice(eq + 1));
    else if (BOOLEAN_OPTIONS.has(name)) flagsOnly.add(name);
    else options.set(name, argv[++k] ?? '');
  }
  if (flagsOnly.has('standalone')) return {};
  const result: TorchrunNodes = {};
  const nnodes = options.get('nnodes');
  if (nnodes !== undefined) result.nodes = parseNodeCount(nnodes);
  const rdzv = options.get('rdzv-endpoint');
  const master = options.get('master-addr');
  if (rdzv) result.endpoint = parseAddress(rdzv, 'torchrun --rdzv-endpoint', TORCHRUN_RDZV_PORT);
  else if (master)
    result.endpoint = {
      host: master,
      port: parsePort(options.get('master-port') ?? String(TORCHRUN_MASTER_PORT), 'torchrun --master-port', 65534),
    };
  const id = options.get('rdzv-id');
  if (id) result.runId = id;
  return result;
}

/** torchrun's options that take no value (the rest take one). */
const BOOLEAN_OPTIONS = new Set([
  'standalone',
  'no-python',
  'run-path',
  'module',
  'use-env',
  'tee-none',
  'redirects-none',
]);

/** Where torchrun's own options start in the job's command, or null. */
function launcherIndex(argv: readonly string[]): number | null {
  const run = argv.findIndex((arg) => /(^|\/)torchrun$/.test(arg));
  if (run !== -1) return run + 1;
  const module = argv.findIndex(
    (arg, k) => arg === '-m' && /^torch\.distributed\.(run|launch)$/.test(argv[k + 1] ?? ''),
  );
  return module === -1 ? null : module + 2;
}

/** torchrun's --nnodes: N, or MIN:MAX with MIN = MAX; an elastic range has no fixed node count to wait for. */
function parseNodeCount(text: string): number {
  const [min, max = min] = text.split(':');
  const count = Number(min);
  if (!Number.isInteger(count) || count < 1 || Number(max) !== count) {
    throw new UserError(NODES_TEXT.elasticNodes(text), ExitCode.BadValue);
  }
  return count;
}

/** HOST:PORT (or [v6]:PORT), the port defaulting where the launcher has one. */
function parseAddress(text: string, flag: string, defaultPort: number | null): CoordinatorAddress {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(text.trim());
  if (!match || (match[2] === undefined && defaultPort === null)) {
    throw new UserError(NODES_TEXT.notAddress(flag, text), ExitCode.BadValue);
  }
  return {
    host: match[1].replace(/^\[|\]$/g, ''),
    port: match[2] === undefined ? defaultPort! : parsePort(match[2], flag, 65534),
  };
}

/** A loopback address: every node has it, so no node can host the meeting there for the others. */
function isLoopback(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\./.test(host);
}

/** An srun step: its node count, this node's id, tasks per node, and where node 0's profiler listens. */
interface SlurmStep {
  nodes: number;
  nodeId: number;
  tasksPerNode: number;
  jobId: string;
  coordinator: CoordinatorAddress | null;
}

/**
 * The srun step this CLI runs in, or null: only srun sets SLURM_STEP_ID; a CLI typed in a batch script is no node of a
 * step, and would wait for the allocation's other nodes in vain.
 */
export function slurmStep(env: NodeJS.ProcessEnv): SlurmStep | null {
  if (env.SLURM_JOB_ID === undefined || (env.SLURM_STEP_ID ?? env.SLURM_STEPID) === undefined) return null;
  const nodes = Number(env.SLURM_STEP_NUM_NODES ?? env.SLURM_NNODES ?? env.SLURM_JOB_NUM_NODES ?? '1');
  const nodeList = env.SLURM_STEP_NODELIST ?? env.SLURM_JOB_NODELIST ?? env.SLURM_NODELIST ?? '';
  const host = env.MASTER_ADDR ?? firstHost(nodeList);
  const port = env.MASTER_PORT
    ? parsePort(env.MASTER_PORT, 'MASTER_PORT', 65534) + 1
    : SLURM_PORT_BASE + (Number(env.SLURM_JOB_ID.slice(-4)) || 0);
  return {
    nodes: Number.isInteger(nodes) && nodes > 0 ? nodes : 1,
    nodeId: Number(env.SLURM_NODEID ?? '0'),
    tasksPerNode: tasksPerNode(env.SLURM_STEP_TASKS_PER_NODE ?? env.SLURM_NTASKS_PER_NODE ?? '1'),
    jobId: env.SLURM_JOB_ID,
    coordinator: host ? { host, port } : null,
  };
}

/** Slurm's tasks-per-node list ('2(x3),1'): the most on any node. */
function tasksPerNode(text: string): number {
  const counts = text.split(',').map((part) => Number(part.split('(')[0]));
  return Math.max(1, ...counts.filter((n) => Number.isInteger(n)));
}

/** The first host of a Slurm host list: 'gpu[07-09,12],cpu1' is gpu07, 'a1,a2' is a1. */
export function firstHost(list: string): string | null {
  const match = /^([^,[]*)(?:\[([^\]]*)\]([^,]*))?/.exec(list.trim());
  if (!match || (!match[1] && match[2] === undefined)) return null;
  if (match[2] === undefined) return match[1] || null;
  const first = match[2].split(',')[0].split('-')[0];
  return `${match[1]}${first}${match[3]}`;
}
