// /proc/self/mountinfo, parsed once for everything that asks which file system
// holds a path (file-systems.ts) or where the cgroup hierarchies are mounted (cgroups.ts, memory-budget.ts). Format:
// proc(5), "/proc/pid/mountinfo".

/** One mount of /proc/self/mountinfo. */
export interface Mount {
  /** Root of the mount within its file system (field 4): '/' unless a bind mount or a container shows a sub-tree. */
  root: string;
  /** Where it is mounted (field 5), unescaped. */
  mountPoint: string;
  /** File-system type (first field after the '-' separator): ext4, tmpfs, cgroup2, fuse.s3fs. */
  type: string;
  /** Mount source, unescaped: /dev/vda1, server:/export, cgroup. */
  source: string;
  /** Per-mount options (field 6): ro, noatime, relatime. */
  mountOptions: string[];
  /** Per-superblock options (last field): a cgroup v1 mount lists its controllers here. */
  superOptions: string[];
}

/** Parses mountinfo text; malformed lines are skipped. */
export function parseMountinfo(text: string): Mount[] {
  const mounts: Mount[] = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    // Six fixed fields, optional fields (shared:N...), then '-', type and source.
    const dash = fields.indexOf('-');
    if (dash < 6 || fields.length < dash + 3) continue;
    mounts.push({
      root: unescapeOctal(fields[3]),
      mountPoint: unescapeOctal(fields[4]),
      type: fields[dash + 1],
      source: unescapeOctal(fields[dash + 2]),
      mountOptions: fields[5].split(',').filter(Boolean),
      superOptions: (fields[dash + 3] ?? '').split(',').filter(Boolean),
    });
  }
  return mounts;
}

// mountinfo escapes space, tab, newline and backslash as \ooo.
function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(parseInt(octal, 8)));
}

/** The mount holding an absolute, resolved path: the last mount whose point is its longest prefix. */
export function mountOf(mounts: readonly Mount[], resolved: string): Mount | null {
  let best: Mount | null = null;
  for (const mount of mounts) {
    const point = mount.mountPoint;
    const inside =
      point === '/' || resolved === point || resolved.startsWith(point.endsWith('/') ? point : `${point}/`);
    if (inside && (best === null || point.length >= best.mountPoint.length)) best = mount;
  }
  return best;
}
