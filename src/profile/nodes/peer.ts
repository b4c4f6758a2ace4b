// One TCP connection between two CLIs of a multi-node profile (node-link.ts): the messages, as JSON lines both ways (a
// bulk line followed by its raw bytes, the network probe), the pings, and the silence that means a peer is gone.
import type { Socket } from 'node:net';
import { z } from 'zod';
import { HostSchema, ModeResultSchema, NodeIdentitySchema, StorageProbeSchema } from '../../schema/profile.js';

/** The largest bulk a peer sends or asks for: the network probe's. */
export const MAX_BULK_BYTES = 32 * 1024 * 1024;
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
export type PeerEvent = Message | { t: 'bulk-received'; bytes: number };
export type Message = z.infer<typeof MessageSchema>;

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

/** One TCP connection to a peer: JSON lines both ways (a bulk line then its raw bytes), pings, and silence. */
export class Peer {
  /** Bytes of a line not ended yet, as they came (joined at its end: a result of a few MB comes in many chunks). */
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
    if (!this.stop()) return;
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
    if (this.stop()) this.onGone(why);
  }

  /** Stops the pings and the watch for silence; false when the connection was closed already. */
  private stop(): boolean {
    if (this.closed) return false;
    this.closed = true;
    clearInterval(this.ping);
    clearTimeout(this.silence);
    return true;
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

/** The timing with its defaults. */
export function fullTiming(timing: LinkTiming): Required<LinkTiming> {
  return { silenceSec: DEFAULT_SILENCE_SEC, pingMs: DEFAULT_PING_MS, ...timing };
}
