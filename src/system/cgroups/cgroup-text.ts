// Messages of the cgroup and CPU affinity errors, shown to users: one line each, with the cause, the flag and the fix.

/** Messages of the cgroup and CPU affinity errors (one line each: cause, flag, fix). */
export const CGROUP_TEXT = {
  fix:
    'run as root, or use a cgroup v2 delegated subtree (DSA_CGROUP_PARENT=/sys/fs/cgroup/<delegated>), or ' +
    'omit --storage-bw',
  noCgroups: 'no cgroup file system is mounted at /sys/fs/cgroup (or it is not readable)',
  notWritable: (controller: string, dir: string) =>
    `the cgroup ${controller} controller at ${dir} is not writable by this user`,
  notAvailable: (controller: string) => `the cgroup ${controller} controller is not available on this machine`,
  v2NoParent: (controller: string, reasons: string) =>
    `no cgroup v2 group where the ${controller} controller can be enabled for a child (${reasons})`,
  setFailed: (file: string, value: string, why: string) => `cannot write '${value}' to ${file}: ${why}`,
  badName: (name: string) => `invalid cgroup name '${name}': use letters, digits, '.', '_' and '-'`,
  badDevice: (device: string) => `invalid block device '${device}': expected major:minor, e.g. 254:0`,
  notEmpty: (dir: string) => `cgroup ${dir} still has processes; remove it with rmdir once they exit`,
  joinFailed: 'ds-analyzer: cannot join cgroup',
  /** An obstacle of the environment, with the fix every one of them shares. */
  withFix: (cause: string): string => `${cause}; ${CGROUP_TEXT.fix}`,
  createFailed: (dir: string, why: string) => `cannot create cgroup ${dir}: ${why}`,
  einval: "EINVAL (the kernel rejected the value: a partition or unknown device needs the whole disk's major:minor)",
  noCommand: 'no command to run: give the training command after --',
  badProcsPath: "invalid cgroup.procs path '--'",
  tooManyCpus: (count: number, available: number) =>
    `--cpus ${count}: only ${available} CPUs are available here; choose counts up to ${available}`,
} as const;
