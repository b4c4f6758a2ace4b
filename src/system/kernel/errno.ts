// How a failed system call is named in messages and counters: the symbolic errno (ENOENT), as Node's own errors carry
// it in .code.
import { constants } from 'node:os';

/** The symbolic name of an errno number (ENOENT), or 'errno N'. */
export function errnoName(errno: number): string {
  for (const [name, value] of Object.entries(constants.errno)) if (value === errno) return name;
  return `errno ${errno}`;
}

/** The code of a Node system error (ENOENT), or its message for any other error. */
export function errorCode(error: unknown): string {
  if (error && typeof error === 'object' && 'code' in error && typeof error.code === 'string') return error.code;
  return error instanceof Error ? error.message : String(error);
}

/** The first line of an error's message. */
export function firstLine(error: unknown): string {
  return (error instanceof Error ? error.message : String(error)).split('\n')[0];
}

/** A Node-style error for a failed call: message `what: ENAME` (or the name alone), `code` the name. */
export function errnoError(errno: number, what?: string): NodeJS.ErrnoException {
  const name = errnoName(errno);
  return Object.assign(new Error(what === undefined ? name : `${what}: ${name}`), { code: name });
}
