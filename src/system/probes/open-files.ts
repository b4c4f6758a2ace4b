// Files the job reads outside --data (a validation set, labels), whose reads count in read_bytes as the dataset's: the
// tree's open descriptors sampled, counted by directory.
import fs from 'node:fs';
import path from 'node:path';

/** Directories of the files read outside --data, most files first. */
export interface OutsideReads {
  /** One entry per directory. */
  dirs: { dir: string; files: number; bytes: number }[];
  /** Distinct files seen. */
  files: number;
}

// Where a job's own machinery lives: libraries, interpreters, devices, the kernel's files.
const SYSTEM_PREFIXES = [
  '/proc/',
  '/sys/',
  '/dev/',
  '/run/',
  '/usr/',
  '/lib/',
  '/lib64/',
  '/bin/',
  '/sbin/',
  '/etc/',
  '/snap/',
  '/var/lib/',
  '/var/cache/',
];
const SYSTEM_PARTS = [
  '/site-packages/',
  '/dist-packages/',
  '/node_modules/',
  '/lib/python',
  '/.cache/',
  '/__pycache__/',
  '/.triton/',
  '/.nv/',
];
// O_ACCMODE and O_WRONLY from <fcntl.h>: a file opened write-only is an output (a checkpoint, a log).
const O_ACCMODE = 3;
const O_WRONLY = 1;
// Distinct files remembered; beyond this, files not yet seen are no longer looked at (no fdinfo read, no stat).
const MAX_FILES = 20_000;
// Sightings kept per file: enough to tell a file open only during a validation pass from one open throughout.
const MAX_SIGHTINGS = 64;

/** Samples the job tree's open files; call sample() with the tree's pids, then result(). */
export class OutsideReadsSampler {
  private readonly inside: string[];
  // Each file: its size, when it was last seen open (ms since epoch), and its first sightings (up to MAX_SIGHTINGS).
  private readonly seen = new Map<string, { bytes: number; lastSeenAt: number; sightings: number[] }>();

  constructor(
    /** The --data roots, as given. */
    roots: readonly string[],
    /** Directories whose files are the profiler's own (the mode's events and logs). */
    private readonly ownDirs: readonly string[],
    private readonly procRoot = '/proc',
  ) {
    const inside = new Set<string>();
    for (const root of roots) {
      const absolute = path.resolve(root);
      inside.add(absolute);
      try {
        inside.add(fs.realpathSync(absolute));
      } catch {
        // A root that vanished still counts by its name.
      }
    }
    this.inside = [...inside];
  }

  /** Reads the open descriptors of `pids` at `now`; never throws (processes come and go). */
  sample(pids: readonly number[], now = Date.now()): void {
    for (const pid of pids) {
      let fds: string[];
      try {
        fds = fs.readdirSync(`${this.procRoot}/${pid}/fd`);
      } catch {
        continue;
      }
      for (const fd of fds) {
        let target: string;
        try {
          target = fs.readlinkSync(`${this.procRoot}/${pid}/fd/${fd}`);
        } catch {
          continue;
        }
        if (!target.startsWith('/')) continue; // pipe:[..], socket:[..], anon_inode:..
        if (target.endsWith(' (deleted)')) continue;
        const known = this.seen.get(target);
        if (known) {
          known.lastSeenAt = now;
          // One sighting a sample, however many processes hold it open (forked workers inherit descriptors).
          if (known.sightings.length < MAX_SIGHTINGS && known.sightings.at(-1) !== now) known.sightings.push(now);
          continue;
        }
        if (this.seen.size >= MAX_FILES || !this.isCandidate(target)) continue;
        if (!this.openedForReading(pid, fd)) continue;
        let bytes: number;
        try {
          const stat = fs.statSync(target);
          if (!stat.isFile()) continue;
          bytes = stat.size;
        } catch {
          continue;
        }
        this.seen.set(target, { bytes, lastSeenAt: now, sightings: [now] });
      }
    }
  }

  /**
   * What was seen so far; with `since`, only the files still seen open at or after it (ms since epoch); with `until`,
   * not those first seen after it; with `aside`, not the files seen open in the window only within those spans (the
   * training loader idle: a validation pass, a checkpoint copied).
   */
  result(since = -Infinity, aside: readonly { startMs: number; endMs: number }[] = [], until = Infinity): OutsideReads {
    const byDir = new Map<string, { files: number; bytes: number }>();
    let files = 0;
    const within = (t: number) => aside.some((a) => t >= a.startMs && t <= a.endMs);
    for (const [file, { bytes, lastSeenAt, sightings }] of this.seen) {
      if (lastSeenAt < since || sightings[0] > until) continue;
      // Left out only where seen open in the window, and there only while the loader was idle: a file open across
      // the window (seen before and after it) counts, and so does one seen more often than the sightings kept.
      const inWindow = sightings.filter((t) => t >= since && t <= until);
      if (sightings.length < MAX_SIGHTINGS && inWindow.length > 0 && inWindow.every(within)) continue;
      files++;
      const dir = path.dirname(file);
      const entry = byDir.get(dir) ?? { files: 0, bytes: 0 };
      entry.files++;
      entry.bytes += bytes;
      byDir.set(dir, entry);
    }
    const dirs = [...byDir]
      .map(([dir, e]) => ({ dir, ...e }))
      .sort((a, b) => b.files - a.files || (a.dir < b.dir ? -1 : 1));
    return { dirs, files };
  }

  private isCandidate(file: string): boolean {
    if (this.inside.some((root) => file === root || file.startsWith(root.endsWith('/') ? root : `${root}/`)))
      return false;
    if (this.ownDirs.some((dir) => file.startsWith(`${dir}/`))) return false;
    if (SYSTEM_PREFIXES.some((prefix) => file.startsWith(prefix))) return false;
    return !SYSTEM_PARTS.some((part) => file.includes(part));
  }

  private openedForReading(pid: number, fd: string): boolean {
    try {
      const match = /^flags:\s*([0-7]+)/m.exec(fs.readFileSync(`${this.procRoot}/${pid}/fdinfo/${fd}`, 'utf8'));
      return match ? (parseInt(match[1], 8) & O_ACCMODE) !== O_WRONLY : true;
    } catch {
      return true;
    }
  }
}

/** One line naming the directories read outside --data, or null when there were none. */
export function outsideReadsNote(reads: OutsideReads, shown = 3): string | null {
  if (reads.files === 0) return null;
  const named = reads.dirs
    .slice(0, shown)
    .map((d) => `${d.dir} (${d.files} file${d.files === 1 ? '' : 's'})`)
    .join(', ');
  const more =
    reads.dirs.length > shown
      ? ` and ${reads.dirs.length - shown} more director${reads.dirs.length - shown === 1 ? 'y' : 'ies'}`
      : '';
  return (
    `the job also read files outside --data: ${named}${more}; their storage reads count as the dataset's, ` +
    `pass their folders to --data too if they are training input`
  );
}
