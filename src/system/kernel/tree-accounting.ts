// The CPU time and storage I/O of a job's whole process tree over time, from the counters in /proc (proc.ts reads them;
// TreeMembers says which processes are in the tree).
import { KernelFile } from './read-text.js';
import {
  clkTck,
  ioCounters,
  parseIoCounters,
  TreeMembers,
  type ProcStat,
  type RootOrigin,
  type TreeMembersOptions,
} from './proc.js';

/** One reading of a tracked tree. */
export interface TreeSnapshot {
  /** ms since epoch. */
  t: number;
  /** Live processes counted in the tree, sorted. */
  pids: number[];
  /** CPU seconds the tree has consumed since it started, never decreasing. */
  cpuSec: number;
  /** Bytes the tree has read from storage, never decreasing. */
  readBytes: number;
  /** False when some process's /proc/PID/io could not be read (the figure is then a lower bound). */
  readBytesComplete: boolean;
  /** Bytes the tree has sent to storage (write_bytes), never decreasing. */
  writeBytes: number;
}

interface Tracked {
  ppid: number;
  /** Last cumulative CPU ticks including reaped children. */
  cpuTicks: number;
  /** Last cumulative read_bytes (includes reaped children). */
  readBytes: number;
  /** Last cumulative write_bytes (includes reaped children). */
  writeBytes: number;
  /** Part of cpuTicks that came from reaped children (cutime + cstime). */
  childTicks: number;
}

interface Credit {
  cpuTicks: number;
  readBytes: number;
  writeBytes: number;
  /** Samples this credit stays valid for. */
  ttl: number;
}

/**
 * The CPU time and storage I/O of a process tree over time: increments only, as Linux folds a reaped child's counters
 * into its parent; a vanished child's last value is a credit against its parent's next jump for two samples.
 */
export class TreeAccounting {
  private readonly members: TreeMembers;
  private readonly tracked = new Map<string, Tracked>();
  /** Each member's /proc/PID/io kept open (the real /proc only), by pid and start time. */
  private readonly ioFiles = new Map<string, KernelFile>();
  private credits = new Map<number, Credit[]>();
  private totalTicks = 0;
  private totalReadBytes = 0;
  private totalWriteBytes = 0;

  constructor(
    rootPid: number | null,
    private readonly procRoot = '/proc',
    options: TreeMembersOptions = {},
  ) {
    this.members = new TreeMembers(rootPid, procRoot, options);
  }

  /** Sets the root when the job's pid is known only after the accounting started. */
  setRoot(pid: number, root: RootOrigin = {}): void {
    this.members.setRoot(pid, root);
  }

  /** Closes the /proc files kept open for the tree; a later sample opens them again. */
  close(): void {
    this.members.close();
    for (const file of this.ioFiles.values()) file.close();
    this.ioFiles.clear();
  }

  /** read_bytes and write_bytes of a member, through its kept /proc/PID/io on the real /proc. */
  private ioOf(stat: ProcStat, key: string): { readBytes: number; writeBytes: number } | null {
    if (this.procRoot !== '/proc') return ioCounters(stat.pid, this.procRoot);
    let file = this.ioFiles.get(key);
    if (!file) {
      file = new KernelFile(`${this.procRoot}/${stat.pid}/io`);
      this.ioFiles.set(key, file);
    }
    return parseIoCounters(file.read());
  }

  /** Reads the tree now and returns the accumulated totals. */
  sample(): TreeSnapshot {
    const stats = this.members.read();
    const byKey = new Map(stats.map((s) => [`${s.pid}:${s.startTicks}`, s]));

    // Processes gone since the last sample (a member stays one while it lives): their parent may absorb them.
    for (const [key, gone] of this.tracked) {
      if (byKey.has(key)) continue;
      this.tracked.delete(key);
      this.ioFiles.get(key)?.close();
      this.ioFiles.delete(key);
      const list = this.credits.get(gone.ppid) ?? [];
      list.push({ cpuTicks: gone.cpuTicks, readBytes: gone.readBytes, writeBytes: gone.writeBytes, ttl: 2 });
      this.credits.set(gone.ppid, list);
    }

    let complete = true;
    for (const stat of stats) {
      const key = `${stat.pid}:${stat.startTicks}`;
      const childTicks = stat.cutimeTicks + stat.cstimeTicks;
      const cpuTicks = stat.utimeTicks + stat.stimeTicks + childTicks;
      const io = this.ioOf(stat, key);
      if (io === null) complete = false;
      const previous = this.tracked.get(key);
      const ioNow = io?.readBytes ?? previous?.readBytes ?? 0;
      const writeNow = io?.writeBytes ?? previous?.writeBytes ?? 0;
      let cpuInc = Math.max(0, cpuTicks - (previous?.cpuTicks ?? 0));
      let ioInc = Math.max(0, ioNow - (previous?.readBytes ?? 0));
      let writeInc = Math.max(0, writeNow - (previous?.writeBytes ?? 0));
      if (previous) {
        // Only a jump in the reaped-children part can be an absorbed child.
        let childJump = Math.max(0, childTicks - previous.childTicks);
        for (const credit of this.credits.get(stat.pid) ?? []) {
          const cpuAbsorbed = Math.min(credit.cpuTicks, childJump, cpuInc);
          cpuInc -= cpuAbsorbed;
          childJump -= cpuAbsorbed;
          credit.cpuTicks -= cpuAbsorbed;
          const ioAbsorbed = Math.min(credit.readBytes, ioInc);
          ioInc -= ioAbsorbed;
          credit.readBytes -= ioAbsorbed;
          const writeAbsorbed = Math.min(credit.writeBytes, writeInc);
          writeInc -= writeAbsorbed;
          credit.writeBytes -= writeAbsorbed;
        }
      }
      this.totalTicks += cpuInc;
      this.totalReadBytes += ioInc;
      this.totalWriteBytes += writeInc;
      this.tracked.set(key, { ppid: stat.ppid, cpuTicks, readBytes: ioNow, writeBytes: writeNow, childTicks });
    }

    const kept = new Map<number, Credit[]>();
    for (const [pid, list] of this.credits) {
      const live = list.filter((c) => --c.ttl > 0 && (c.cpuTicks > 0 || c.readBytes > 0 || c.writeBytes > 0));
      if (live.length > 0) kept.set(pid, live);
    }
    this.credits = kept;

    return {
      t: Date.now(),
      pids: stats.map((s) => s.pid).sort((a, b) => a - b),
      cpuSec: this.totalTicks / clkTck(),
      readBytes: this.totalReadBytes,
      readBytesComplete: complete,
      writeBytes: this.totalWriteBytes,
    };
  }
}
