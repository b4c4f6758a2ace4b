// The CLIs of a multi-node profile, kept in step over one TCP connection each
// to a small coordinator that the CLI on one node hosts:
//
//   hello    a node arrives with its schedule; refused unless it is the same
//   ready    a node has set its cache state for a run; the coordinator says
//   go       once every node is ready, so every node's mode starts together
//   result   a node's result of the run; the coordinator merges them and
//   verdict  says to every node whether the schedule goes on
//   final    a node's last words (its storage probe); then
//   end      the coordinator closes the profile, with a reason when it aborts
//
// Messages are JSON lines. Every side pings every second; a peer silent for
// `silenceSec`, or whose connection closes, is lost, and every node learns it
// at once: its waits fail with a NodeLostError, its running job is stopped.
import { connect, createServer, type Server, type Socket } from 'node:net';
import { z } from 'zod';
import { ExitCode, UserError } from '../../errors.js';
import {
  HostSchema,
  ModeResultSchema,
  NodeIdentitySchema,
  StorageProbeSchema,
  type Host,
  type ModeResult,
  type NodeIdentity,
  type StorageProbe,
} from '../../schema/profile.js';
import type { RunVerdict } from '../run-setup.js';
import type { CoordinatorAddress, NodePlan } from './node-plan.js';
import { NODES_TEXT } from './nodes-text.js';

/** Another node left, failed or never came: this node's measured modes are kept, its schedule ends. */
export class NodeLostError extends UserError {
  constructor(message: string) {
    super(message, ExitCode.NodeLost);
    this.name = 'NodeLostError';
  }
}

/** What a node tells the coordinator as it arrives: the schedule it will run must be every node's. */
export interface NodeHello {
  /** ds-analyzer's version: one protocol on every node. */
  version: string;
  /** The options that fix the schedule of runs, as text; two nodes with different ones could not stay in step. */
  schedule: string;
  /** The job's run id (torchrun --rdzv-id, SLURM_JOB_ID), '' when none. */
  runId: string;
  /** The node's machine. */
  host: Host;
  /** Its dataset, so the coordinator can say when the nodes read different data. */
  dataset: { files: number; bytes: number };
}

/** One node's result of a run, with the node that measured it. */
export interface NodeRunResult {
  node: NodeIdentity;
  result: ModeResult;
}

/** A node's last words, sent as the profile ends. */
export interface NodeFinal {
  storageProbe: StorageProbe | null;
}

/** A node as the coordinator knows it: its hello, and where it stands. */
export interface ArrivedNode {
  hello: NodeHello;
  /** Its own profile's path, on that node. */
  profilePath: string;
}

/**
 * The bulk that measures the network between two nodes, and the small one whose time (a round trip, the framing) is
 * taken off it.
 */
const PROBE_BYTES = 32 * 1024 * 1024;
const PROBE_BASE_BYTES = 64 * 1024;
const MAX_BULK_BYTES = PROBE_BYTES;
/** A line longer than this is no ds-analyzer message (a result with its samples is a few MB at most). */
const MAX_LINE_BYTES = 64 * 1024 * 1024;
/** Zeros to send as bulk bytes, allocated on first use. */
let bulkZeros: Buffer | null = null;

const HelloSchema = z.object({
  version: z.string(),
  schedule: z.string(),
  runId: z.string(),
  host: HostSchema,
  dataset: z.object({ files: z.number(), bytes: z.number() }),
});

const MessageSchema = z.discriminatedUnion('t', [
  z.object({ t: z.literal('hello'), hello: HelloSchema, profilePath: z.string() }),
  z.object({ t: z.literal('welcome') }),
  z.object({ t: z.literal('ping') }),
  z.object({ t: z.literal('ready'), label: z.string() }),
  z.object({ t: z.literal('go'), label: z.string() }),
  z.object({
    t: z.literal('result'),
    label: z.string(),
    node: NodeIdentitySchema,
    result: ModeResultSchema.passthrough(),
  }),
  z.object({
    t: z.literal('verdict'),
    label: z.string(),
    workersNotApplied: z.string().nullable(),
    status: z.enum(['ok', 'failed', 'interrupted']),
    stalled: z.boolean().optional(),
  }),
  z.object({ t: z.literal('final'), storageProbe: StorageProbeSchema.nullable() }),
  // reason null: an orderly end; else the profile was aborted, and why.
  z.object({ t: z.literal('end'), reason: z.string().nullable() }),
  // The network between the nodes, measured as they arrive: `bytes` raw bytes follow a bulk line.
  z.object({ t: z.literal('bulk'), bytes: z.number().int().nonnegative().max(MAX_BULK_BYTES) }),
  z.object({ t: z.literal('bulk-ack'), bytes: z.number().int().nonnegative() }),
  z.object({ t: z.literal('bulk-request'), bytes: z.number().int().nonnegative().max(MAX_BULK_BYTES) }),
  z.object({ t: z.literal('peer-bw'), bytesPerSec: z.number().nonnegative().nullable() }),
]);
/** What a Peer hands on beside the wire's messages: a bulk's bytes all received. */
type PeerEvent = Message | { t: 'bulk-received'; bytes: number };
type Message = z.infer<typeof MessageSchema>;

/** How the link watches its peers; tests shorten them. */
export interface LinkTiming {
  /** Seconds to wait for every node to arrive (the coordinator) or for the coordinator to answer (a node). */
  arriveTimeoutSec: number;
  /** A peer silent this long is lost (default 30 s: a CLI busy evicting a large dataset still pings). */
  silenceSec?: number;
  /** How often each side pings, ms (default 1000). */
  pingMs?: number;
}

const DEFAULT_SILENCE_SEC = 30;
const DEFAULT_PING_MS = 1000;
/** Seconds between a node's attempts to reach a coordinator not listening yet. */
const DIAL_RETRY_MS = 500;

/**
 * One TCP connection to a peer: JSON lines both ways (a bulk line followed
 * by its raw bytes), pings, and the silence that means it is gone.
 */
class Peer {
  /**
   * Bytes of a line not ended yet, kept as they came (joined once its end comes: a result of a few MB comes in many
   * chunks).
   */
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** Raw bytes of a bulk still to come, and the bulk's size. */
  private bulkLeft = 0;
  private bulkBytes = 0;
  private silence: NodeJS.Timeout | undefined;
  private readonly ping: NodeJS.Timeout;
  private closed = false;

  constructor(
    private readonly socket: Socket,
    private readonly timing: Required<LinkTiming>,
    private readonly onMessage: (message: PeerEvent) => void,
    private readonly onGone: (why: string) => void,
  ) {
    socket.setNoDelay(true);
    socket.on('data', (chunk: Buffer) => this.receive(chunk));
    socket.on('close', () => this.gone('its connection closed'));
    socket.on('error', (error) => this.gone(`its connection failed (${error.message})`));
    this.ping = setInterval(() => this.send({ t: 'ping' }), timing.pingMs);
    this.ping.unref();
    this.armSilence();
  }

  send(message: Message): void {
    if (!this.closed) this.socket.write(JSON.stringify(message) + '\n');
  }

  /** Sends `bytes` raw bytes after a bulk line (the network probe). */
  sendBulk(bytes: number): void {
    if (this.closed) return;
    bulkZeros ??= Buffer.alloc(MAX_BULK_BYTES);
    this.send({ t: 'bulk', bytes });
    this.socket.write(bulkZeros.subarray(0, bytes));
  }

  /** Ends the connection after what was sent is flushed; the peer's close is then no loss. */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ping);
    clearTimeout(this.silence);
    this.socket.end();
    this.socket.unref();
  }

  private receive(chunk: Buffer): void {
    if (this.closed) return; // the link has ended: what a peer still says changes nothing
    this.armSilence();
    if (this.bulkLeft === 0 && chunk.indexOf(10) === -1) {
      this.pending.push(chunk);
      this.pendingBytes += chunk.length;
      if (this.pendingBytes > MAX_LINE_BYTES) this.refuse();
      return;
    }
    let data = this.pending.length > 0 ? Buffer.concat([...this.pending, chunk]) : chunk;
    while (data.length > 0 || this.bulkLeft === 0) {
      if (this.bulkLeft > 0) {
        const take = Math.min(this.bulkLeft, data.length);
        data = data.subarray(take);
        this.bulkLeft -= take;
        if (this.bulkLeft > 0) break;
        this.onMessage({ t: 'bulk-received', bytes: this.bulkBytes });
        if (this.closed) return;
        continue;
      }
      const end = data.indexOf(10);
      if (end === -1) break;
      const parsed = parseMessage(data.subarray(0, end).toString('utf8'));
      data = data.subarray(end + 1);
      if (parsed === null) {
        this.refuse();
        return;
      }
      if (parsed.t === 'bulk') {
        this.bulkLeft = parsed.bytes;
        this.bulkBytes = parsed.bytes;
        if (parsed.bytes === 0) this.onMessage({ t: 'bulk-received', bytes: 0 });
      } else if (parsed.t !== 'ping') this.onMessage(parsed);
      if (this.closed) return;
    }
    if (data.length > MAX_LINE_BYTES) {
      this.refuse();
      return;
    }
    this.pending = data.length > 0 ? [Buffer.from(data)] : [];
    this.pendingBytes = data.length;
  }

  private refuse(): void {
    this.socket.destroy();
    this.gone("it sent a message that is not ds-analyzer's");
  }

  private armSilence(): void {
    clearTimeout(this.silence);
    this.silence = setTimeout(() => {
      this.socket.destroy();
      this.gone(`it was silent for ${this.timing.silenceSec} s`);
    }, this.timing.silenceSec * 1000);
    this.silence.unref();
  }

  private gone(why: string): void {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.ping);
    clearTimeout(this.silence);
    this.onGone(why);
  }
}

function parseMessage(line: string): Message | null {
  try {
    const parsed = MessageSchema.safeParse(JSON.parse(line));
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

function fullTiming(timing: LinkTiming): Required<LinkTiming> {
  return { silenceSec: DEFAULT_SILENCE_SEC, pingMs: DEFAULT_PING_MS, ...timing };
}

/** A wait that resolves once `check` finds its value, or fails when the link is lost. */
interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** What both ends share: waits that the next message may end, and the loss that fails them all. */
abstract class LinkBase {
  private waiters: Waiter[] = [];
  private lostHandlers: ((message: string) => void)[] = [];
  /** Why the profile cannot go on across the nodes, once it cannot. */
  lostReason: string | null = null;

  /** Runs `handler` once when the link is lost (a running job must be stopped: its peers are gone). */
  onLost(handler: (message: string) => void): void {
    if (this.lostReason !== null) handler(this.lostReason);
    else this.lostHandlers.push(handler);
  }

  protected wait(check: () => boolean): Promise<void> {
    if (this.lostReason !== null) return Promise.reject(new NodeLostError(this.lostReason));
    if (check()) return Promise.resolve();
    return new Promise((resolve, reject) => this.waiters.push({ check, resolve, reject }));
  }

  /** Re-checks every wait after a message. */
  protected pump(): void {
    const pending = this.waiters;
    this.waiters = [];
    for (const waiter of pending) {
      if (waiter.check()) waiter.resolve();
      else this.waiters.push(waiter);
    }
  }

  protected lose(message: string): void {
    if (this.lostReason !== null) return;
    this.lostReason = message;
    for (const waiter of this.waiters) waiter.reject(new NodeLostError(message));
    this.waiters = [];
    for (const handler of this.lostHandlers) handler(message);
    this.lostHandlers = [];
  }
}

/** The link as run-profile uses it, on the coordinator's node and on every other. */
export interface NodeLink {
  /** Nodes in the profile. */
  readonly nodes: number;
  /** Whether this CLI hosts the coordinator (and writes the merged profile). */
  readonly isCoordinator: boolean;
  /** Why the profile cannot go on, once a node is lost. */
  readonly lostReason: string | null;
  /** Resolves once every node has set its cache state for `label`. */
  barrier(label: string): Promise<void>;
  /**
   * Hands this node's result of `label` over; resolves with what the
   * coordinator decided from every node's (the same verdict on every node),
   * and on the coordinator with every node's results too.
   */
  settle(
    label: string,
    own: NodeRunResult,
    decide: (results: NodeRunResult[]) => RunVerdict,
  ): Promise<{ verdict: RunVerdict; results: NodeRunResult[] | null }>;
  /** Ends the profile in order; the coordinator gets every node's last words. */
  finish(final: NodeFinal): Promise<NodeFinal[]>;
  /** Ends the profile now, telling every peer why. */
  abort(reason: string): void;
  onLost(handler: (message: string) => void): void;
  /** The other nodes as they arrived (the coordinator's view; empty on a node). */
  readonly arrived: readonly ArrivedNode[];
}

/** The coordinator, hosted by one node's CLI: every other node dials it. */
export class CoordinatorLink extends LinkBase implements NodeLink {
  readonly isCoordinator = true;
  readonly arrived: ArrivedNode[] = [];
  private readonly peers: Peer[] = [];
  private readonly ready: string[] = [];
  private readonly results: (NodeRunResult & { label: string })[][] = [];
  private readonly finals: (NodeFinal | null)[] = [];
  /** The network probe: the last bulk each node acknowledged, and the last each sent here. */
  private readonly acked: (number | null)[] = [];
  private readonly received: (number | null)[] = [];
  /**
   * Bytes/s each node read from this one at arrival, and what this one read from them (the slowest); null where not
   * measured.
   */
  readonly peerBytesPerSec: (number | null)[] = [];
  ownPeerBytesPerSec: number | null = null;
  private closing = false;

  private constructor(
    readonly nodes: number,
    private readonly server: Server,
    private readonly own: NodeHello,
    private readonly timing: Required<LinkTiming>,
  ) {
    super();
  }

  /** Listens on `port` and waits until the other nodes of `plan` have all arrived with this node's schedule. */
  static async open(plan: NodePlan, own: NodeHello, timing: LinkTiming): Promise<CoordinatorLink> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', (error: NodeJS.ErrnoException) =>
        reject(
          new UserError(NODES_TEXT.portTaken(plan.coordinator.port, error.code ?? error.message), ExitCode.Environment),
        ),
      );
      server.listen(plan.coordinator.port, () => resolve());
    });
    const link = new CoordinatorLink(plan.nodes, server, own, fullTiming(timing));
    server.on('connection', (socket) => link.accept(socket));
    try {
      await link.allArrived(plan);
      await link.measurePeers();
    } catch (error) {
      link.abort(error instanceof Error ? error.message : String(error));
      throw error;
    }
    return link;
  }

  private allArrived(plan: NodePlan): Promise<void> {
    const timer = setTimeout(() => {
      this.lose(
        `only ${this.arrived.length + 1} of ${plan.nodes} nodes reached the meeting ` +
          `point ${plan.coordinator.host}:${plan.coordinator.port} within ${this.timing.arriveTimeoutSec} s: ` +
          `start ds-analyzer profile on every node with the same command (its --nnodes and rendezvous), or raise ` +
          `--nodes-timeout`,
      );
    }, this.timing.arriveTimeoutSec * 1000);
    return this.wait(() => this.arrived.length === this.nodes - 1).finally(() => clearTimeout(timer));
  }

  /**
   * The network between this node and each other one, one node at a time
   * (two at once would share the links): a bulk each way, the time of a
   * small one taken off (a round trip, the framing). Each node is told what
   * it read from here; this node keeps the slowest it read from them.
   */
  private async measurePeers(): Promise<void> {
    const ups: number[] = [];
    for (const [k, peer] of this.peers.entries()) {
      const down = await this.timeBulks((bytes) => {
        this.acked[k] = null;
        peer.sendBulk(bytes);
        return () => this.acked[k] === bytes;
      });
      const up = await this.timeBulks((bytes) => {
        this.received[k] = null;
        peer.send({ t: 'bulk-request', bytes });
        return () => this.received[k] === bytes;
      });
      this.peerBytesPerSec[k] = down;
      peer.send({ t: 'peer-bw', bytesPerSec: down });
      if (up !== null) ups.push(up);
    }
    this.ownPeerBytesPerSec = ups.length > 0 ? Math.min(...ups) : null;
  }

  /**
   * Bytes/s of PROBE_BYTES over PROBE_BASE_BYTES, each started by `start`, done when its check holds; null when the
   * difference is lost in the noise.
   */
  private async timeBulks(start: (bytes: number) => () => boolean): Promise<number | null> {
    const timeOf = async (bytes: number): Promise<number> => {
      const began = process.hrtime.bigint();
      await this.wait(start(bytes));
      return Number(process.hrtime.bigint() - began) / 1e9;
    };
    const base = await timeOf(PROBE_BASE_BYTES);
    const full = await timeOf(PROBE_BYTES);
    return full > base ? (PROBE_BYTES - PROBE_BASE_BYTES) / (full - base) : null;
  }

  private accept(socket: Socket): void {
    if (this.closing || this.arrived.length >= this.nodes - 1) {
      socket.end(JSON.stringify({ t: 'end', reason: `the profile already has its ${this.nodes} nodes` }) + '\n');
      return;
    }
    let index = -1;
    const peer = new Peer(
      socket,
      this.timing,
      (message) => {
        if (index === -1) index = this.greet(peer, message);
        else this.receive(index, message);
      },
      (why) => {
        if (index === -1 || this.closing) return; // a stranger that left, or a node after the end
        this.lose(`node ${this.nameOf(index)} left the profile: ${why}`);
      },
    );
  }

  /**
   * A new node's hello: its index among the peers when its schedule is this one's; -1 (and the door closed) when not.
   */
  private greet(peer: Peer, message: PeerEvent): number {
    if (message.t !== 'hello') {
      peer.send({ t: 'end', reason: 'a node must say hello first' });
      peer.close();
      return -1;
    }
    const refusal = helloMismatch(this.own, message.hello);
    if (refusal !== null) {
      peer.send({ t: 'end', reason: refusal });
      peer.close();
      this.lose(`a node (${message.hello.host.hostname}) was refused: ${refusal}`);
      return -1;
    }
    const index = this.peers.length;
    this.peers.push(peer);
    this.arrived.push({ hello: message.hello, profilePath: message.profilePath });
    this.results.push([]);
    this.finals.push(null);
    this.acked.push(null);
    this.received.push(null);
    this.peerBytesPerSec.push(null);
    peer.send({ t: 'welcome' });
    this.pump();
    return index;
  }

  private receive(index: number, message: PeerEvent): void {
    if (message.t === 'bulk-ack') this.acked[index] = message.bytes;
    else if (message.t === 'bulk-received') this.received[index] = message.bytes;
    else if (message.t === 'ready') this.ready[index] = message.label;
    else if (message.t === 'result')
      this.results[index].push({ label: message.label, node: message.node, result: message.result as ModeResult });
    else if (message.t === 'final') this.finals[index] = { storageProbe: message.storageProbe };
    else if (message.t === 'end' && message.reason !== null)
      this.lose(`node ${this.nameOf(index)} ended the profile: ${message.reason}`);
    this.pump();
  }

  private nameOf(index: number): string {
    return this.arrived[index]?.hello.host.hostname ?? `#${index + 1}`;
  }

  async barrier(label: string): Promise<void> {
    await this.wait(() => this.peers.every((_, k) => this.ready[k] === label));
    for (const peer of this.peers) peer.send({ t: 'go', label });
  }

  async settle(label: string, own: NodeRunResult, decide: (results: NodeRunResult[]) => RunVerdict) {
    const theirs = (k: number) => this.results[k].find((r) => r.label === label);
    await this.wait(() => this.peers.every((_, k) => theirs(k) !== undefined));
    const results = [own, ...this.peers.map((_, k) => theirs(k)!)].map(({ node, result }) => ({ node, result }));
    for (const list of this.results) list.splice(0, list.length);
    const verdict = decide(results);
    for (const peer of this.peers) peer.send({ t: 'verdict', label, ...verdict });
    return { verdict, results };
  }

  async finish(): Promise<NodeFinal[]> {
    await this.wait(() => this.finals.every((f) => f !== null));
    this.close(null);
    return this.finals as NodeFinal[];
  }

  abort(reason: string): void {
    this.close(reason);
  }

  private close(reason: string | null): void {
    if (this.closing) return;
    this.closing = true;
    for (const peer of this.peers) {
      peer.send({ t: 'end', reason });
      peer.close();
    }
    this.server.close();
    this.server.unref();
  }

  protected override lose(message: string): void {
    super.lose(message);
    // Every other node hears it now, not when its own wait times out.
    this.close(message);
  }
}

/** Why a node's hello cannot join this profile, or null when it can. */
function helloMismatch(own: NodeHello, theirs: NodeHello): string | null {
  if (theirs.version !== own.version)
    return `it runs ds-analyzer ${theirs.version} and the first node ${own.version}: install one version on every node`;
  if (theirs.runId !== own.runId) return `it belongs to another job (run id '${theirs.runId}', not '${own.runId}')`;
  if (theirs.schedule !== own.schedule) {
    return (
      `its profile options differ from the first node's ` +
      `(${scheduleDifference(theirs.schedule, own.schedule)}): give every node the same --modes, --precision, ` +
      `iteration limits and sweeps`
    );
  }
  return null;
}

/** The options two schedules set differently: 'precision 0.02 against 0.05'. */
function scheduleDifference(theirs: string, own: string): string {
  const a = JSON.parse(theirs) as Record<string, unknown>;
  const b = JSON.parse(own) as Record<string, unknown>;
  const keys = [...new Set([...Object.keys(a), ...Object.keys(b)])].filter(
    (k) => JSON.stringify(a[k]) !== JSON.stringify(b[k]),
  );
  return keys.map((k) => `${k} ${JSON.stringify(a[k])} against ${JSON.stringify(b[k])}`).join(', ');
}

/** A node's end of the link: it dials the coordinator and follows it. */
export class FollowerLink extends LinkBase implements NodeLink {
  readonly isCoordinator = false;
  readonly arrived: readonly ArrivedNode[] = [];
  private go = new Set<string>();
  private verdicts = new Map<string, RunVerdict>();
  private welcomed = false;
  private ended = false;
  /** Bytes/s this node read from the coordinator at arrival (undefined until it says; null: not measured). */
  peerBytesPerSec: number | null | undefined = undefined;

  private constructor(
    readonly nodes: number,
    private readonly where: string,
  ) {
    super();
  }

  private peer!: Peer;

  /** Dials the coordinator (again and again, until it listens or the arrival time is up) and says hello. */
  static async open(plan: NodePlan, hello: NodeHello, profilePath: string, timing: LinkTiming): Promise<FollowerLink> {
    const full = fullTiming(timing);
    const where = `${plan.coordinator.host}:${plan.coordinator.port}`;
    const socket = await dial(plan.coordinator, full.arriveTimeoutSec, where);
    const link = new FollowerLink(plan.nodes, where);
    link.peer = new Peer(
      socket,
      full,
      (message) => link.receive(message),
      (why) => {
        if (!link.ended) link.lose(`the coordinator at ${where} is gone: ${why}`);
      },
    );
    link.peer.send({ t: 'hello', hello, profilePath });
    const timer = setTimeout(
      () => link.lose(`the coordinator at ${where} did not answer within ${full.arriveTimeoutSec} s`),
      full.arriveTimeoutSec * 1000,
    );
    try {
      await link.wait(() => link.welcomed);
    } finally {
      clearTimeout(timer);
    }
    return link;
  }

  /** Resolves once the coordinator has measured the network to this node (every node has arrived). */
  async peerBandwidth(): Promise<number | null> {
    await this.wait(() => this.peerBytesPerSec !== undefined);
    return this.peerBytesPerSec ?? null;
  }

  private receive(message: PeerEvent): void {
    if (message.t === 'bulk-received') this.peer.send({ t: 'bulk-ack', bytes: message.bytes });
    else if (message.t === 'bulk-request') this.peer.sendBulk(message.bytes);
    else if (message.t === 'peer-bw') this.peerBytesPerSec = message.bytesPerSec;
    else if (message.t === 'welcome') this.welcomed = true;
    else if (message.t === 'go') this.go.add(message.label);
    else if (message.t === 'verdict')
      this.verdicts.set(message.label, {
        workersNotApplied: message.workersNotApplied,
        status: message.status,
        stalled: message.stalled === true,
      });
    else if (message.t === 'end') {
      this.ended = true;
      if (message.reason !== null) this.lose(`the coordinator at ${this.where} ended the profile: ${message.reason}`);
      this.peer.close();
    }
    this.pump();
  }

  async barrier(label: string): Promise<void> {
    this.peer.send({ t: 'ready', label });
    await this.wait(() => this.go.has(label));
  }

  async settle(label: string, own: NodeRunResult) {
    this.peer.send({ t: 'result', label, node: own.node, result: own.result });
    await this.wait(() => this.verdicts.has(label));
    return { verdict: this.verdicts.get(label)!, results: null };
  }

  async finish(final: NodeFinal): Promise<NodeFinal[]> {
    this.peer.send({ t: 'final', storageProbe: final.storageProbe });
    await this.wait(() => this.ended);
    return [];
  }

  abort(reason: string): void {
    this.ended = true;
    this.peer.send({ t: 'end', reason });
    this.peer.close();
  }
}

/** A connection to the coordinator, retried while it is not listening yet (nodes start in any order). */
async function dial(address: CoordinatorAddress, timeoutSec: number, where: string): Promise<Socket> {
  const deadline = Date.now() + timeoutSec * 1000;
  let last = '';
  while (Date.now() < deadline) {
    try {
      return await new Promise<Socket>((resolve, reject) => {
        const socket = connect({ host: address.host, port: address.port });
        socket.once('connect', () => {
          socket.removeAllListeners('error');
          resolve(socket);
        });
        socket.once('error', reject);
      });
    } catch (error) {
      last = (error as NodeJS.ErrnoException).code ?? String(error);
      await new Promise((resolve) => setTimeout(resolve, DIAL_RETRY_MS));
    }
  }
  throw new NodeLostError(
    `no coordinator answered at ${where} within ${timeoutSec} s (last: ${last}): start ds-analyzer profile on ` +
      `the first node too, with the same command, or raise --nodes-timeout`,
  );
}
