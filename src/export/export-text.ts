// Messages of export's errors, shown to users: one line each, with the cause, the flag and the fix. write-export.ts
// decides; the words live here.

/** Messages of writing an export (one line each: cause, flag, fix). */
export const EXPORT_TEXT = {
  cannotWrite: (out: string, code: string) => `cannot write '${out}' (${code}): pick a folder you can write with --out`,
  notLogDir: (out: string) => `'${out}' is a file, not a TensorBoard log dir: name a folder with --out`,
  isFolder: (out: string, format: string) => `'${out}' is a folder: name the ${format} file with --out`,
  notAFormat: (value: string, formats: readonly string[]) =>
    `--format ${value} is not a format export writes: use ${formats.join(', ')}`,
  exists: (out: string) => `'${out}' exists: pass --force to replace it, or --out to write elsewhere`,
} as const;
