// A node's end of a multi-node profile's link (node-link.ts): it dials the coordinator, says hello, and follows it.
import { connect, type Socket } from 'node:net';
import type { RunVerdict } from '../run-setup.js';
import {
  LinkBase,
  NodeLostError,
  type ArrivedNode,
  type NodeFinal,
  type NodeHello,
  type NodeLink,
  type NodeRunResult,
} from './node-link.js';
import type { CoordinatorAddress, NodePlan } from './node-plan.js';
import { fullTiming, Peer, type LinkTiming, type PeerEvent } from './peer.js';

/** Seconds between a node's attempts to reach a coordinator not listening yet. */
const DIAL_RETRY_MS = 500;

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
    const silent = () => `the coordinator at ${where} did not answer within ${full.arriveTimeoutSec} s`;
    await link.waitWithin(() => link.welcomed, full.arriveTimeoutSec, silent);
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
