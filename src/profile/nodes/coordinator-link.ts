// The coordinator of a multi-node profile (node-link.ts), hosted by one node's CLI: every other node dials it, and it
// keeps them in step, measures the network to each as they arrive, and gathers their results.
import { createServer, type Server, type Socket } from 'node:net';
import { ExitCode, UserError } from '../../errors.js';
import type { ModeResult } from '../../schema/profile.js';
import type { RunVerdict } from '../run-setup.js';
import {
  LinkBase,
  type ArrivedNode,
  type NodeFinal,
  type NodeHello,
  type NodeLink,
  type NodeRunResult,
} from './node-link.js';
import type { NodePlan } from './node-plan.js';
import { NODES_TEXT } from './nodes-text.js';
import { fullTiming, MAX_BULK_BYTES, Peer, type LinkTiming, type PeerEvent } from './peer.js';

/** The bulk that measures the network between two nodes, and the small one whose time is taken off it. */
const PROBE_BYTES = MAX_BULK_BYTES;
const PROBE_BASE_BYTES = 64 * 1024;

/** Another node as the coordinator follows it. */
interface Member {
  peer: Peer;
  /** The last run it has set its cache state for. */
  ready: string | null;
  /** Its results not settled yet, by run. */
  results: (NodeRunResult & { label: string })[];
  /** Its last words, once it said them. */
  final: NodeFinal | null;
  /** The network probe: the last bulk it acknowledged, and the last it sent here. */
  acked: number | null;
  received: number | null;
}

/** The coordinator, hosted by one node's CLI: every other node dials it. */
export class CoordinatorLink extends LinkBase implements NodeLink {
  readonly isCoordinator = true;
  readonly arrived: ArrivedNode[] = [];
  /** Each other node's connection and what it said, in the order they arrived. */
  private readonly members: Member[] = [];
  /** Bytes/s each node read from this one at arrival, and this one's slowest from them; null: not measured. */
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
    const where = `${plan.coordinator.host}:${plan.coordinator.port}`;
    return this.waitWithin(
      () => this.arrived.length === this.nodes - 1,
      this.timing.arriveTimeoutSec,
      () =>
        `only ${this.arrived.length + 1} of ${plan.nodes} nodes reached the meeting point ${where} within ` +
        `${this.timing.arriveTimeoutSec} s: start ds-analyzer profile on every node with the same command (its ` +
        `--nnodes and rendezvous), or raise --nodes-timeout`,
    );
  }

  /**
   * The network to each other node, one at a time (two would share the links): a bulk each way, a small one's time
   * taken off. Each node is told what it read from here; this node keeps the slowest it read from them.
   */
  private async measurePeers(): Promise<void> {
    const ups: number[] = [];
    for (const [k, member] of this.members.entries()) {
      const down = await this.timeBulks((bytes) => {
        member.acked = null;
        member.peer.sendBulk(bytes);
        return () => member.acked === bytes;
      });
      const up = await this.timeBulks((bytes) => {
        member.received = null;
        member.peer.send({ t: 'bulk-request', bytes });
        return () => member.received === bytes;
      });
      this.peerBytesPerSec[k] = down;
      member.peer.send({ t: 'peer-bw', bytesPerSec: down });
      if (up !== null) ups.push(up);
    }
    this.ownPeerBytesPerSec = ups.length > 0 ? Math.min(...ups) : null;
  }

  /** Bytes/s of PROBE_BYTES over PROBE_BASE_BYTES, each done when `start`'s check holds; null: lost in the noise. */
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
        else this.receive(index, this.members[index], message);
      },
      (why) => {
        if (index === -1 || this.closing) return; // a stranger that left, or a node after the end
        this.lose(`node ${this.nameOf(index)} left the profile: ${why}`);
      },
    );
  }

  /** A new node's hello: its index among the peers when its schedule is this one's, else -1 (and refused). */
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
    const index = this.members.length;
    this.members.push({ peer, ready: null, results: [], final: null, acked: null, received: null });
    this.arrived.push({ hello: message.hello, profilePath: message.profilePath });
    this.peerBytesPerSec.push(null);
    peer.send({ t: 'welcome' });
    this.pump();
    return index;
  }

  private receive(index: number, member: Member, message: PeerEvent): void {
    if (message.t === 'bulk-ack') member.acked = message.bytes;
    else if (message.t === 'bulk-received') member.received = message.bytes;
    else if (message.t === 'ready') member.ready = message.label;
    else if (message.t === 'result')
      member.results.push({ label: message.label, node: message.node, result: message.result as ModeResult });
    else if (message.t === 'final') member.final = { storageProbe: message.storageProbe };
    else if (message.t === 'end' && message.reason !== null)
      this.lose(`node ${this.nameOf(index)} ended the profile: ${message.reason}`);
    this.pump();
  }

  private nameOf(index: number): string {
    return this.arrived[index]?.hello.host.hostname ?? `#${index + 1}`;
  }

  async barrier(label: string): Promise<void> {
    await this.wait(() => this.members.every((m) => m.ready === label));
    for (const { peer } of this.members) peer.send({ t: 'go', label });
  }

  async settle(label: string, own: NodeRunResult, decide: (results: NodeRunResult[]) => RunVerdict) {
    const theirs = (m: Member) => m.results.find((r) => r.label === label);
    await this.wait(() => this.members.every((m) => theirs(m) !== undefined));
    const results = [own, ...this.members.map((m) => theirs(m)!)].map(({ node, result }) => ({ node, result }));
    for (const m of this.members) m.results = [];
    const verdict = decide(results);
    for (const { peer } of this.members) peer.send({ t: 'verdict', label, ...verdict });
    return { verdict, results };
  }

  async finish(): Promise<NodeFinal[]> {
    await this.wait(() => this.members.every((m) => m.final !== null));
    this.close(null);
    return this.members.map((m) => m.final!);
  }

  abort(reason: string): void {
    this.close(reason);
  }

  private close(reason: string | null): void {
    if (this.closing) return;
    this.closing = true;
    for (const { peer } of this.members) {
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
