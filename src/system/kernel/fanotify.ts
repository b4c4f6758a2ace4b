// Reading fanotify(7) events out of the bytes read(2) returns: struct fanotify_event_metadata in the host's order
// (event_len, vers, mask at 8, fd at 16), fd a descriptor opened for the reader or -1.
import { endianness } from 'node:os';

const METADATA_BYTES = 24;
const METADATA_VERSION = 3;
const littleEndian = endianness() === 'LE';

/**
 * Calls `visit(mask, fd)` for each whole event of `buffer` (the mask's low 32 bits); the caller owns each descriptor.
 * At an event of another version or a malformed length calls `unreadable` and stops (the rest stay open).
 */
export function forEachFanotifyEvent(
  buffer: Buffer,
  length: number,
  visit: (mask: number, fd: number) => void,
  unreadable: () => void = () => {},
): number {
  let events = 0;
  for (let offset = 0; offset < length; ) {
    const eventBytes =
      offset + METADATA_BYTES <= length
        ? littleEndian
          ? buffer.readUInt32LE(offset)
          : buffer.readUInt32BE(offset)
        : 0;
    if (buffer[offset + 4] !== METADATA_VERSION || eventBytes < METADATA_BYTES || offset + eventBytes > length) {
      unreadable();
      break;
    }
    const mask = littleEndian ? buffer.readUInt32LE(offset + 8) : buffer.readUInt32BE(offset + 12);
    const fd = littleEndian ? buffer.readInt32LE(offset + 16) : buffer.readInt32BE(offset + 16);
    visit(mask, fd);
    events++;
    offset += eventBytes;
  }
  return events;
}
