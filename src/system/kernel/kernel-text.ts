// Messages of the kernel folder's errors, shown to users: one line each, with the cause and the fix. resolve-command.ts
// and hand-over.ts decide; the words live here. (read-text.ts, despite its name, reads kernel files: no words.)

/** Messages of command lookup and of handing files over (one line each: cause, fix). */
export const KERNEL_TEXT = {
  /** Why a command cannot run, as `commandNotRunnable` and --python complete it. */
  notExecutable: 'is not executable',
  notExecutableFix: 'is not executable (chmod +x it, or run it through its interpreter)',
  notFound: 'was not found',
  commandNotRunnable: (file: string, reason: string) =>
    `command '${file}' ${reason}: check the spelling, the PATH, or give the full path after '--'`,
  cannotGive: (path: string, uid: number, code: string) =>
    `cannot give ${path} to uid ${uid} (${code}): put --out or --profiles-dir on a local disk, or pass --as-user root`,
} as const;
