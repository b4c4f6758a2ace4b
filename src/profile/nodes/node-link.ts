// The CLIs of a multi-node profile, kept in step over one TCP connection each to a coordinator one CLI hosts: hello (a
// node's schedule, refused unless the same), ready and go (every node's state set), result and verdict (the merged
// run's verdict for every node), final (a node's storage probe), end (with a reason when aborted). A peer silent for
// `silenceSec`, or whose connection closes, is lost: every wait fails with a NodeLostError. The wire is peer.ts; the
// coordinator's end is coordinator-link.ts, every other node's follower-link.ts.
import { ExitCode, UserError } from '../../errors.js';
import type { Host, ModeResult, NodeIdentity, StorageProbe } from '../../schema/profile.js';
import type { RunVerdict } from '../run-setup.js';

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

/** A wait that resolves once `check` finds its value, or fails when the link is lost. */
interface Waiter {
  check: () => boolean;
  resolve: () => void;
  reject: (error: Error) => void;
}

/** What both ends share: waits that the next message may end, and the loss that fails them all. */
export abstract class LinkBase {
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

  /** A wait that loses the link, saying `why`, when `check` does not hold within `sec`. */
  protected waitWithin(check: () => boolean, sec: number, why: () => string): Promise<void> {
    const timer = setTimeout(() => this.lose(why()), sec * 1000);
    return this.wait(check).finally(() => clearTimeout(timer));
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
  /** Hands this node's result over; resolves with the verdict every node gets (the coordinator: and all results). */
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
