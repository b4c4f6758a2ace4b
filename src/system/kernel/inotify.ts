// Reading inotify(7) events out of the bytes read(2) returns: struct inotify_event { wd, mask, cookie, len, name[len] }
// in the host's order, the name NUL-padded (len 0 for the directory itself and overflows).
import { endianness } from 'node:os';

const HEADER_BYTES = 16;
const littleEndian = endianness() === 'LE';

/**
 * Calls `visit(wd, mask, name)` for each whole event of `buffer` (name: a view of its bytes without the NUL padding,
 * valid during the call); a partial tail is malformed and ignored. Returns the events visited.
 */
export function forEachInotifyEvent(
  buffer: Buffer,
  length: number,
  visit: (wd: number, mask: number, name: Buffer) => void,
): number {
  let events = 0;
  for (let offset = 0; offset + HEADER_BYTES <= length; ) {
    const wd = littleEndian ? buffer.readInt32LE(offset) : buffer.readInt32BE(offset);
    const mask = littleEndian ? buffer.readUInt32LE(offset + 4) : buffer.readUInt32BE(offset + 4);
    const nameBytes = littleEndian ? buffer.readUInt32LE(offset + 12) : buffer.readUInt32BE(offset + 12);
    const start = offset + HEADER_BYTES;
    const end = start + nameBytes;
    if (end > length) break;
    const nul = nameBytes > 0 ? buffer.indexOf(0, start) : start;
    visit(wd, mask, buffer.subarray(start, nul < 0 || nul > end ? end : nul));
    events++;
    offset = end;
  }
  return events;
}
