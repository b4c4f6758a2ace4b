// Thin bindings to the few libc calls that control and observe the page cache.
//
// koffi is required lazily (createRequire, on first use) so that importing this
// module never fails: on a machine where koffi's prebuilt binary or libc.so.6
// is missing (macOS, musl, an odd architecture), loadLibc() answers
// { ok: false, reason } and callers degrade.
//
// Addresses are declared as intptr_t so that they come back as plain numbers
// (user-space addresses are below 2^47, well within Number's exact range) and
// MAP_FAILED comes back as -1; that keeps pointer arithmetic for mincore
// windows trivial.
import { createRequire } from 'node:module';

/** PROT_READ from <sys/mman.h>. */
export const PROT_READ = 1;
/** MAP_SHARED from <sys/mman.h>: the mapping shows the file's page-cache pages. */
export const MAP_SHARED = 1;

/** posix_fadvise advice values (Linux; s390x 64-bit numbers DONTNEED and NOREUSE differently). */
export const FADV = {
  /** POSIX_FADV_SEQUENTIAL. */
  sequential: 2,
  /** POSIX_FADV_WILLNEED: start read-ahead of the range. */
  willNeed: 3,
  /** POSIX_FADV_DONTNEED: drop the range's clean pages from the page cache. */
  dontNeed: process.arch === 's390x' ? 6 : 4,
} as const;

/** The libc calls the page-cache code needs; every call returns 0 or an errno, never throws. */
export interface LibcBindings {
  /** The system page size in bytes (getpagesize). */
  pageSizeBytes: number;
  /** posix_fadvise(fd, offset, len, advice); returns 0 or the error number (it does not use errno). */
  posixFadvise(fd: number, offsetBytes: number, lengthBytes: number, advice: number): number;
  /** mmap(NULL, length, prot, flags, fd, offset); returns the address, or -errno on failure. */
  mmap(lengthBytes: number, prot: number, flags: number, fd: number, offsetBytes: number): number;
  /** munmap(addr, length); returns 0 or errno. */
  munmap(address: number, lengthBytes: number): number;
  /** mincore(addr, length, vec): one byte per page, low bit = resident; returns 0 or errno. */
  mincore(address: number, lengthBytes: number, vec: Uint8Array): number;
  /** sync(2): schedule writeback of all dirty pages of all file systems. */
  sync(): void;
}

/** The outcome of loading libc once: the bindings, or why they are unavailable. */
export type LibcLoad = { ok: true; libc: LibcBindings } | { ok: false; reason: string };

let loaded: LibcLoad | undefined;

/** Loads koffi and libc.so.6 on first call and memoizes the result; never throws. */
export function loadLibc(): LibcLoad {
  loaded ??= tryLoad();
  return loaded;
}

function tryLoad(): LibcLoad {
  if (process.platform !== 'linux') {
    return { ok: false, reason: `page-cache control needs Linux (this is ${process.platform})` };
  }
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
  } catch (error) {
    return { ok: false, reason: `cannot load koffi (${firstLine(error)})` };
  }
  try {
    const lib = koffi.load('libc.so.6');
    const getpagesize = lib.func('int getpagesize(void)');
    const fadvise = lib.func('int posix_fadvise(int fd, int64_t offset, int64_t len, int advice)');
    const mmap = lib.func(
      'intptr_t mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)',
    );
    const munmap = lib.func('int munmap(intptr_t addr, size_t length)');
    const mincore = lib.func('int mincore(intptr_t addr, size_t length, _Out_ uint8_t *vec)');
    const sync = lib.func('void sync(void)');
    const errno = (): number => koffi.errno();
    const pageSizeBytes = Number(getpagesize());
    if (!(pageSizeBytes > 0)) return { ok: false, reason: 'getpagesize() returned no page size' };
    const libc: LibcBindings = {
      pageSizeBytes,
      posixFadvise: (fd, offsetBytes, lengthBytes, advice) =>
        Number(fadvise(fd, offsetBytes, lengthBytes, advice)),
      mmap: (lengthBytes, prot, flags, fd, offsetBytes) => {
        const address = Number(mmap(null, lengthBytes, prot, flags, fd, offsetBytes));
        return address === -1 ? -errno() : address;
      },
      munmap: (address, lengthBytes) => (Number(munmap(address, lengthBytes)) === 0 ? 0 : errno()),
      mincore: (address, lengthBytes, vec) =>
        Number(mincore(address, lengthBytes, vec)) === 0 ? 0 : errno(),
      sync: () => {
        sync();
      },
    };
    return { ok: true, libc };
  } catch (error) {
    return { ok: false, reason: `cannot bind libc.so.6 (${firstLine(error)})` };
  }
}

function firstLine(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  return text.split('\n')[0];
}
