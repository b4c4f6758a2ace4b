/**
 * TensorBoard's event file, written without TensorFlow: TFRecord framing of Event protocol buffers
 * (tensorflow/core/util/event.proto, tensorflow/core/framework/summary.proto; TFRecord in
 * tensorflow/core/lib/io/record_writer.cc). Each record is
 *
 *   uint64 length (little-endian) | uint32 masked crc32c(length bytes)
 *   | data | uint32 masked crc32c(data)
 *
 * with mask(crc) = ((crc >>> 15) | (crc << 17)) + 0xa282ead8. Only the few fields a scalar needs are encoded:
 * Event{wall_time=1 double, step=2 int64, file_version=3 string, summary=5 Summary{value=1 Value{tag=1 string,
 * simple_value=2 float}}}.
 */

/**
 * CRC-32C (Castagnoli, reflected polynomial 0x82F63B78; RFC 3720 B.4), from a 256-entry table. Twelve lines here rather
 * than a dependency: the npm packages that are fast use a native module, a burden in the release tarball, and an event
 * file of a profile is a few hundred kilobytes.
 */
const CRC32C_TABLE = (() => {
  const table = new Uint32Array(256);
  for (let n = 0; n < 256; n++) {
    let c = n;
    for (let k = 0; k < 8; k++) c = c & 1 ? (c >>> 1) ^ 0x82f63b78 : c >>> 1;
    table[n] = c >>> 0;
  }
  return table;
})();

/** CRC-32C of `bytes`, unsigned. */
export function crc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) crc = CRC32C_TABLE[(crc ^ byte) & 0xff] ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** TFRecord's masked CRC: a CRC of data that holds CRCs is itself a poor check, so it is rotated and offset. */
export function maskedCrc32c(bytes: Uint8Array): number {
  const crc = crc32c(bytes);
  return ((((crc >>> 15) | (crc << 17)) >>> 0) + 0xa282ead8) >>> 0;
}

/** One record, framed. */
export function tfRecord(data: Uint8Array): Buffer {
  const header = Buffer.alloc(12);
  header.writeBigUInt64LE(BigInt(data.length), 0);
  header.writeUInt32LE(maskedCrc32c(header.subarray(0, 8)), 8);
  const footer = Buffer.alloc(4);
  footer.writeUInt32LE(maskedCrc32c(data), 0);
  return Buffer.concat([header, data, footer]);
}

/** A protobuf varint of a non-negative integer (steps and lengths stay far below 2^53). */
function varint(value: number): Buffer {
  const bytes: number[] = [];
  let v = value;
  while (v >= 0x80) {
    bytes.push((v % 0x80) | 0x80);
    v = Math.floor(v / 0x80);
  }
  bytes.push(v);
  return Buffer.from(bytes);
}

/** A field key: (field number << 3) | wire type. */
function key(field: number, wireType: 0 | 1 | 2 | 5): Buffer {
  return varint(field * 8 + wireType);
}

function lengthDelimited(field: number, payload: Buffer): Buffer {
  return Buffer.concat([key(field, 2), varint(payload.length), payload]);
}

/** A double (wire type 1, 8 bytes) or a float (wire type 5, 4 bytes). */
function fixed(field: number, value: number, bytes: 4 | 8): Buffer {
  const b = Buffer.alloc(bytes);
  if (bytes === 8) b.writeDoubleLE(value, 0);
  else b.writeFloatLE(value, 0);
  return Buffer.concat([key(field, bytes === 8 ? 1 : 5), b]);
}

/** The first record of every event file: Event{wall_time, file_version: "brain.Event:2"}. */
export function fileVersionEvent(wallTimeSec: number): Buffer {
  return Buffer.concat([fixed(1, wallTimeSec, 8), lengthDelimited(3, Buffer.from('brain.Event:2', 'utf8'))]);
}

/** One scalar: Event{wall_time, step, summary: Summary{value: [Value{tag, simple_value}]}}. */
export interface Scalar {
  tag: string;
  step: number;
  /** Seconds since the Unix epoch. */
  wallTimeSec: number;
  value: number;
}

/** The Event message of a scalar. */
export function scalarEvent(scalar: Scalar): Buffer {
  if (!Number.isSafeInteger(scalar.step) || scalar.step < 0)
    throw new RangeError(`scalar step must be a non-negative integer (got ${scalar.step})`);
  const value = Buffer.concat([lengthDelimited(1, Buffer.from(scalar.tag, 'utf8')), fixed(2, scalar.value, 4)]);
  const summary = lengthDelimited(1, value);
  return Buffer.concat([fixed(1, scalar.wallTimeSec, 8), key(2, 0), varint(scalar.step), lengthDelimited(5, summary)]);
}

/** A whole event file: the version record, then one record per scalar, in order. */
export function eventFile(wallTimeSec: number, scalars: readonly Scalar[]): Buffer {
  return Buffer.concat([tfRecord(fileVersionEvent(wallTimeSec)), ...scalars.map((s) => tfRecord(scalarEvent(s)))]);
}
