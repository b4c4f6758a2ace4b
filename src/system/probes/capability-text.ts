// Advice shown to users about what this machine can and cannot do: what a profile loses without each capability, and
// how to get it. Used by `doctor` (the cgroup errors' own messages are in cgroups/cgroup-text.ts).

/** Names of the capabilities `doctor` checks, in display order. */
export const CAPABILITY_NAMES = [
  'root',
  'cgroup',
  'page-cache-eviction',
  'residency',
  'storage-throttle',
  'drop-caches',
  'nvidia-smi',
  'python-torch',
  'no-proactive-reclaim',
] as const;
export type CapabilityName = (typeof CAPABILITY_NAMES)[number];

/** What the profile loses without a capability, and the fix. */
export const CAPABILITY_TEXT: Record<CapabilityName, { impact: string; fix: string }> = {
  root: {
    impact:
      'without root: no storage throttle (--storage-bw on local data) unless a delegated cgroup v2 group has the ' +
      "io controller, no global drop_caches (--drop-caches), DAMON's proactive reclaim keeps running while " +
      "profiling, and /proc/PID/io of other users' processes is unreadable; per-file eviction, validate's " +
      'cache points (a cap in user space) and CPU counts (affinity) need no root',
    fix:
      'run ds-analyzer as root (sudo), or give it a delegated cgroup v2 group with the io controller in ' +
      'DSA_CGROUP_PARENT for the throttle',
  },
  cgroup: {
    impact:
      'without a writable cgroup io/blkio controller there is no storage throttle: profile --storage-bw and ' +
      'validate --storage-bw on local data are refused (remote data is capped at the metering proxy instead); ' +
      'validate --cache and --cpus need no cgroup',
    fix:
      'run as root with cgroup v1 or v2 mounted at /sys/fs/cgroup, or start under a delegated v2 group ' +
      '(systemd-run --user --scope -p Delegate=yes ...) and name it in DSA_CGROUP_PARENT',
  },
  'page-cache-eviction': {
    impact:
      'without posix_fadvise the cold mode cannot evict just the dataset: it needs the global drop_caches (root) ' +
      'or is reported unproven',
    fix: 'make the koffi package load (npm install koffi; needs glibc libc.so.6 on Linux)',
  },
  residency: {
    impact: 'without mincore the cached and cold modes cannot prove how much of the dataset was in the page cache',
    fix: 'make the koffi package load (npm install koffi; needs glibc libc.so.6 on Linux)',
  },
  'storage-throttle': {
    impact:
      '--storage-bw is unavailable on local data: profile cannot measure the job at a slower storage, and ' +
      'validate cannot check whatif --storage-bw against it',
    fix:
      'run as root (cgroup v1 blkio or v2 io), or name a delegated cgroup v2 group with the io controller in ' +
      'DSA_CGROUP_PARENT, or omit --storage-bw',
  },
  'drop-caches': {
    impact:
      '--drop-caches is unavailable; per-file eviction (posix_fadvise) still works and is preferred, since the ' +
      "global drop also evicts the framework's libraries",
    fix: 'run as root to write /proc/sys/vm/drop_caches, or rely on per-file eviction',
  },
  'nvidia-smi': {
    impact: 'no GPU utilisation or memory in the resource samples, and no GPUs in the host facts',
    fix: 'install the NVIDIA driver utilities (nvidia-smi on PATH); ignore on a machine without NVIDIA GPUs',
  },
  'python-torch': {
    impact:
      "a PyTorch job run with the job's python3 (or --python) fails at `import torch` (the built-in emulated job " +
      'and `demo` still work)',
    fix:
      'install PyTorch for the interpreter you run the job with (pip install torch; on Debian: apt-get ' +
      'install -y python3-torch python3-torchvision)',
  },
  'no-proactive-reclaim': {
    impact:
      "a DAMON pageout scheme evicts pages that sit idle, the dataset's page cache included: a cached mode whose " +
      "epochs are slower than the scheme's minimum age reads from storage and is reported unproven",
    fix:
      'stop the scheme while profiling (echo off > /sys/kernel/mm/damon/admin/kdamonds/N/state, as root), or ' +
      'profile with a smaller dataset so an epoch is quick',
  },
};

/** doctor --require: the one line saying which capabilities asked for are missing, and where their fixes are. */
export function requiredMissingText(names: readonly CapabilityName[], json: boolean): string {
  const where = json ? 'each one\'s fix is in its row\'s "fix"' : "each one's cost and fix are listed above";
  return `--require: missing on this machine: ${names.join(', ')} (${where}); plain 'ds-analyzer doctor' reports without failing`;
}

/** doctor --require: a name that is no capability. */
export function unknownCapabilityText(name: string): string {
  return `--require: '${name}' is not a capability doctor checks; use any of ${CAPABILITY_NAMES.join(', ')}`;
}
