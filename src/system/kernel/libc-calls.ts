// Every libc call bound through koffi, in one table, bound once, and one convention for what a call answers: >= 0, or
// -errno. koffi loads lazily, so where it or libc.so.6 is missing (macOS, musl) callers get { ok: false, reason }.
import { createRequire } from 'node:module';
import { firstLine } from './errno.js';

/** The C prototype of each call; posix_fadvise answers its error number itself: read it through raw(). */
const LIBC_PROTOTYPES = {
  getpagesize: 'int getpagesize(void)',
  posix_fadvise: 'int posix_fadvise(int fd, int64_t offset, int64_t len, int advice)',
  mmap: 'intptr_t mmap(void *addr, size_t length, int prot, int flags, int fd, int64_t offset)',
  munmap: 'int munmap(intptr_t addr, size_t length)',
  mincore: 'int mincore(intptr_t addr, size_t length, _Out_ uint8_t *vec)',
  sync: 'void sync(void)',
  syncfs: 'int syncfs(int fd)',
  inotify_init1: 'int inotify_init1(int flags)',
  inotify_add_watch: 'int inotify_add_watch(int fd, const char *path, uint32_t mask)',
  fanotify_init: 'int fanotify_init(unsigned int flags, unsigned int event_f_flags)',
  fanotify_mark: 'int fanotify_mark(int fd, unsigned int flags, uint64_t mask, int dirfd, const char *path)',
  read: 'intptr_t read(int fd, _Out_ uint8_t *buf, size_t count)',
  pread: 'intptr_t pread(int fd, _Out_ uint8_t *buf, size_t count, int64_t offset)',
  open: 'int open(const char *path, int flags)',
  openat: 'int openat(int dirfd, const uint8_t *path, int flags)',
  close: 'int close(int fd)',
  // glibc 2.34 and later: a libc without it still binds every other call.
  close_range: 'int close_range(unsigned int first, unsigned int last, int flags)',
  statx: 'int statx(int dirfd, const uint8_t *path, int flags, unsigned int mask, _Out_ uint8_t *buf)',
  personality: 'int personality(unsigned long persona)',
  // struct timespec is two 64-bit words on the 64-bit ABIs koffi's prebuilt binaries cover.
  clock_gettime: 'int clock_gettime(int clock, _Out_ int64_t *ts)',
  // syscall() is variadic; x86-64 and aarch64 pass these arguments alike, so a fixed prototype serves cachestat.
  syscall: 'long syscall(long nr, int fd, const uint8_t *range, _Out_ uint8_t *cstat, unsigned int flags)',
} as const;

/** A call's name in the table. */
export type LibcCallName = keyof typeof LIBC_PROTOTYPES;

/** Calls a libc may lack; every other call binds, or none is bound. */
const OPTIONAL_CALLS: ReadonlySet<LibcCallName> = new Set<LibcCallName>(['close_range']);

/** A bound call: koffi's function, its arguments as koffi takes them. */
export type BoundCall = (...args: unknown[]) => unknown;

/** The bound table: each call as koffi answers it, or under the convention. */
export interface LibcCalls {
  /** Whether `name` is bound: false only for an optional call this libc lacks. */
  has(name: LibcCallName): boolean;
  /** koffi's function for `name`, answering as the C call does (for calls outside the convention). */
  raw(name: LibcCallName): BoundCall;
  /** `name` under the convention: its result when >= 0, else -errno (look it up once: the per-file calls are hot). */
  checked(name: LibcCallName): (...args: unknown[]) => number;
}

/** The table, or why it could not be bound. */
export type LibcCallsLoad = { ok: true; calls: LibcCalls } | { ok: false; reason: string };

let table: LibcCallsLoad | undefined;

/** Loads koffi and libc.so.6 and binds the table on first call, memoized; never throws. */
export function bindLibcCalls(): LibcCallsLoad {
  table ??= bindAll();
  return table;
}

function bindAll(): LibcCallsLoad {
  if (process.platform !== 'linux') return { ok: false, reason: `needs Linux (this is ${process.platform})` };
  let koffi: typeof import('koffi');
  try {
    koffi = createRequire(import.meta.url)('koffi') as typeof import('koffi');
  } catch (error) {
    return { ok: false, reason: `cannot load koffi (${firstLine(error)})` };
  }
  const functions = new Map<LibcCallName, BoundCall>();
  try {
    const lib = koffi.load('libc.so.6');
    for (const [name, prototype] of Object.entries(LIBC_PROTOTYPES) as [LibcCallName, string][]) {
      try {
        functions.set(name, lib.func(prototype) as BoundCall);
      } catch (error) {
        if (!OPTIONAL_CALLS.has(name)) throw error;
      }
    }
  } catch (error) {
    return { ok: false, reason: `cannot bind libc.so.6 (${firstLine(error)})` };
  }
  const errno = (): number => koffi.errno();
  const bound = (name: LibcCallName): BoundCall => {
    const call = functions.get(name);
    if (call === undefined) throw new Error(`${name} is not bound here: ask has(name) first for an optional call`);
    return call;
  };
  const calls: LibcCalls = {
    has: (name) => functions.has(name),
    raw: (name) => bound(name),
    checked: (name) => withErrno(bound(name), arity(LIBC_PROTOTYPES[name]), errno),
  };
  return { ok: true, calls };
}

/** The number of parameters of a C prototype: `int close(int fd)` has 1, `void sync(void)` none. */
function arity(prototype: string): number {
  const params = prototype.slice(prototype.indexOf('(') + 1, prototype.lastIndexOf(')')).trim();
  return params === '' || params === 'void' ? 0 : params.split(',').length;
}

/** `call` under the convention with fixed parameters (a spread rest parameter costs 0.5 us a call). */
function withErrno(call: BoundCall, parameters: number, errno: () => number): (...args: unknown[]) => number {
  const checked = (result: unknown): number => {
    const value = Number(result);
    return value < 0 ? -errno() : value;
  };
  switch (parameters) {
    case 0:
      return () => checked(call());
    case 1:
      return (a) => checked(call(a));
    case 2:
      return (a, b) => checked(call(a, b));
    case 3:
      return (a, b, c) => checked(call(a, b, c));
    case 4:
      return (a, b, c, d) => checked(call(a, b, c, d));
    case 5:
      return (a, b, c, d, e) => checked(call(a, b, c, d, e));
    case 6:
      return (a, b, c, d, e, f) => checked(call(a, b, c, d, e, f));
    default:
      return (...args) => checked(call(...args));
  }
}
