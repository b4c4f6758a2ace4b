// The personality flag that turns address-space randomisation off (setarch -R), set on this process for its children.
import { errnoName } from './errno.js';
import { bindLibcCalls } from './libc-calls.js';

/** ADDR_NO_RANDOMIZE of <sys/personality.h>. */
const ADDR_NO_RANDOMIZE = 0x0040000;
/** personality()'s argument that reads the persona without changing it. */
const QUERY = 0xffffffff;

/**
 * Turns address-space randomisation off for every process this one starts from now on (execve keeps the flag; this
 * process keeps the layout it has). Null when set, else why not (a container's seccomp profile refuses it).
 */
export function fixChildrenLayout(): string | null {
  const load = bindLibcCalls();
  if (!load.ok) return load.reason;
  const personality = load.calls.checked('personality');
  const current = personality(QUERY);
  const set = current < 0 ? current : personality(current | ADDR_NO_RANDOMIZE);
  return set < 0 ? `personality(ADDR_NO_RANDOMIZE): ${errnoName(-set)}` : null;
}
