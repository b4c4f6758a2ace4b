// Messages of page-cache control, shown to users: one line each, with the cause, the flag and the fix (size-limit's
// MESSAGES pattern). page-cache.ts decides; the words live here.

/** Messages of page-cache control (one line each: cause, flag, fix). */
export const PAGE_CACHE_TEXT = {
  unsupported: (reason: string) =>
    `per-file page-cache control is not available here: ${reason}; ` +
    'run on Linux with glibc, or pass --drop-caches as root',
  dropCachesDenied: (code: string) =>
    `--drop-caches: cannot write /proc/sys/vm/drop_caches (${code}); ` +
    'run as root, or omit --drop-caches to use per-file eviction',
  mincoreUntrusted:
    'mincore reports page-cache residency only for files you own or may write (Linux >= 5.2); ' +
    "run as the files' owner or as root",
} as const;
