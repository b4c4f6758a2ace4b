import { constants, deflateRawSync } from 'node:zlib';
import { existsSync, mkdirSync, readFileSync, readdirSync, statSync, unlinkSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { inputError } from '../errors.js';
import { EMULATOR_TEXT } from './emulator-text.js';
import { mixSeed, mulberry32, randomBytes } from '../random.js';

/**
 * A dataset of real files for the emulated job: each file is a zlib stream whose compressed size is about `fileBytes`,
 * holding half random bytes (incompressible, Huffman-coded literals to decode) and half repetitive text (long matches),
 * so the raw:deflated ratio is about 2:1 and inflating a file is real work.
 *
 * Generation must take seconds, not minutes, for hundreds of MiB on 2 cores, and deflating random data is the slow part
 * (about 60 MB/s at level 1). So a pool of chunks is deflated once, and each file is assembled from them: independent
 * raw deflate streams ended by a sync flush are byte-aligned and never refer back to earlier data, so they can be
 * concatenated (RFC 1951 section 3.2.3) behind one zlib header and closed with an empty final block and the Adler-32 of
 * the whole (RFC 1950), combined from the chunks' checksums without re-reading them. Every file also starts with a
 * chunk of its own random bytes, so no two files are the same.
 */

/** What generateDataset produced or found. */
export interface Dataset {
  /** Absolute path of the dataset folder. */
  dir: string;
  /** Number of sample files. */
  files: number;
  /** Total size of the sample files on disk (deflated), bytes. */
  bytes: number;
  /** Whether an existing complete dataset with the same parameters was reused. */
  reused: boolean;
}

/** Parameters of generateDataset. */
export interface DatasetOptions {
  /** Number of sample files. */
  files: number;
  /** Target deflated size of each file, bytes. */
  fileBytes: number;
  /** Seed of the contents. */
  seed?: number;
}

/** Name of the manifest, written last: a dataset without it is incomplete. */
export const MANIFEST_NAME = '.dsa-dataset.json';
const GENERATOR_VERSION = 1;
const SAMPLE_PATTERN = /^sample-(\d+)\.bin$/;
const RANDOM_POOL = 32;
const REPETITIVE_POOL = 8;
const WRITE_CONCURRENCY = 4;

const ManifestSchema = z.object({
  /** Marks the file as ours. */
  kind: z.literal('ds-analyzer-dataset'),
  /** Version of the generator that wrote the files. */
  generator: z.number().int(),
  /** Number of sample files. */
  files: z.number().int().positive(),
  /** Target deflated size per file, bytes. */
  fileBytes: z.number().int().positive(),
  /** Seed of the contents. */
  seed: z.number().int(),
  /** Total deflated bytes of all files. */
  bytes: z.number().int().nonnegative(),
  /** Total inflated bytes of all files. */
  rawBytes: z.number().int().nonnegative(),
});
type Manifest = z.infer<typeof ManifestSchema>;

/** Name of the sample file with this index: sample-00000.bin. */
export function sampleName(index: number): string {
  return `sample-${String(index).padStart(5, '0')}.bin`;
}

const ADLER_BASE = 65521;

/** Adler-32 (RFC 1950). */
export function adler32(data: Uint8Array, start = 1): number {
  let a = start & 0xffff;
  let b = (start >>> 16) & 0xffff;
  let i = 0;
  while (i < data.length) {
    // 3800 steps keep b below 2^31 before the modulo (zlib uses NMAX = 5552 with unsigned ints).
    const end = Math.min(i + 3800, data.length);
    for (; i < end; i++) {
      a += data[i];
      b += a;
    }
    a %= ADLER_BASE;
    b %= ADLER_BASE;
  }
  return ((b << 16) | a) >>> 0;
}

/** Adler-32 of A followed by B from adler(A), adler(B) and B's length (zlib's adler32_combine). */
export function adler32Combine(adlerA: number, adlerB: number, lengthB: number): number {
  const rem = lengthB % ADLER_BASE;
  let sum1 = adlerA & 0xffff;
  let sum2 = (rem * sum1) % ADLER_BASE;
  sum1 += (adlerB & 0xffff) + ADLER_BASE - 1;
  sum2 += ((adlerA >>> 16) & 0xffff) + ((adlerB >>> 16) & 0xffff) + ADLER_BASE - rem;
  if (sum1 >= ADLER_BASE) sum1 -= ADLER_BASE;
  if (sum1 >= ADLER_BASE) sum1 -= ADLER_BASE;
  if (sum2 >= ADLER_BASE * 2) sum2 -= ADLER_BASE * 2;
  if (sum2 >= ADLER_BASE) sum2 -= ADLER_BASE;
  return ((sum2 << 16) | sum1) >>> 0;
}

interface Chunk {
  deflated: Buffer;
  adler: number;
  rawLength: number;
}

function deflateChunk(raw: Buffer): Chunk {
  const deflated = deflateRawSync(raw, { level: 1, finishFlush: constants.Z_SYNC_FLUSH });
  return { deflated, adler: adler32(raw), rawLength: raw.length };
}

const WORDS = ['image', 'label', 'pixel', 'tensor', 'batch', 'epoch', 'shard', 'crop', 'flip', 'mean', 'std', 'rgb'];

function repetitiveRaw(length: number, seed: number): Buffer {
  // Text with a counter every line: long matches with literals between them, like a record-oriented file (CSV, JSON
  // lines); deflate shrinks it about 20-50x.
  const random = mulberry32(seed);
  const phrase = Array.from({ length: 6 }, () => WORDS[Math.floor(random() * WORDS.length)]).join(' ');
  let text = '';
  for (let line = 0; text.length < length; line++) text += `${line} ${phrase} ${line % 97}\n`;
  return Buffer.from(text.slice(0, length), 'latin1');
}

function chunkRawBytes(fileBytes: number): number {
  return Math.max(512, Math.min(16384, Math.floor(fileBytes / 8)));
}

const ZLIB_HEADER = Buffer.from([0x78, 0x01]);
// An empty final block with fixed Huffman codes: BFINAL=1, BTYPE=01, end-of-block.
const FINAL_BLOCK = Buffer.from([0x03, 0x00]);

interface Assembler {
  build(index: number): { data: Buffer; rawBytes: number };
}

function assembler(options: Required<DatasetOptions>): Assembler {
  const chunkRaw = chunkRawBytes(options.fileBytes);
  const randomPool = Array.from({ length: RANDOM_POOL }, (_, k) =>
    deflateChunk(randomBytes(chunkRaw, mixSeed(options.seed, 1, k))),
  );
  const repetitivePool = Array.from({ length: REPETITIVE_POOL }, (_, k) =>
    deflateChunk(repetitiveRaw(chunkRaw, mixSeed(options.seed, 2, k))),
  );
  const mean = (chunks: Chunk[]): number => chunks.reduce((sum, c) => sum + c.deflated.length, 0) / chunks.length;
  const pairBytes = mean(randomPool) + mean(repetitivePool);
  const pairs = Math.max(1, Math.round((options.fileBytes - ZLIB_HEADER.length - FINAL_BLOCK.length - 4) / pairBytes));

  return {
    build(index) {
      const random = mulberry32(mixSeed(options.seed, 3, index));
      const parts: Chunk[] = [];
      for (let p = 0; p < pairs; p++) {
        parts.push(
          p === 0
            ? deflateChunk(randomBytes(chunkRaw, mixSeed(options.seed, 4, index)))
            : randomPool[Math.floor(random() * RANDOM_POOL)],
        );
        parts.push(repetitivePool[Math.floor(random() * REPETITIVE_POOL)]);
      }
      let adler = 1;
      let rawBytes = 0;
      for (const part of parts) {
        adler = adler32Combine(adler, part.adler, part.rawLength);
        rawBytes += part.rawLength;
      }
      const trailer = Buffer.alloc(4);
      trailer.writeUInt32BE(adler);
      const data = Buffer.concat([ZLIB_HEADER, ...parts.map((part) => part.deflated), FINAL_BLOCK, trailer]);
      return { data, rawBytes };
    },
  };
}

function readManifest(dir: string): Manifest | undefined {
  try {
    const parsed = ManifestSchema.safeParse(JSON.parse(readFileSync(join(dir, MANIFEST_NAME), 'utf8')));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}

function isComplete(dir: string, manifest: Manifest): boolean {
  let bytes = 0;
  for (let i = 0; i < manifest.files; i++) {
    try {
      bytes += statSync(join(dir, sampleName(i))).size;
    } catch {
      return false;
    }
  }
  return bytes === manifest.bytes;
}

/**
 * Writes `files` deflate-compressed sample files into `dir` (sample-00000.bin, ...), or reuses a complete dataset there
 * with the same parameters. The manifest is written last, so an interrupted generation is redone on the next call.
 */
export async function generateDataset(dir: string, options: DatasetOptions): Promise<Dataset> {
  const full: Required<DatasetOptions> = { seed: 1, ...options };
  if (!Number.isInteger(full.files) || full.files <= 0 || full.files > 99999) {
    throw new RangeError(`generateDataset: files must be an integer in 1..99999, got ${full.files}`);
  }
  if (!Number.isInteger(full.fileBytes) || full.fileBytes < 64) {
    throw new RangeError(`generateDataset: fileBytes must be an integer of at least 64, got ${full.fileBytes}`);
  }
  const absolute = resolve(dir);
  const existing = readManifest(absolute);
  if (
    existing !== undefined &&
    existing.generator === GENERATOR_VERSION &&
    existing.files === full.files &&
    existing.fileBytes === full.fileBytes &&
    existing.seed === full.seed &&
    isComplete(absolute, existing)
  ) {
    return { dir: absolute, files: existing.files, bytes: existing.bytes, reused: true };
  }

  mkdirSync(absolute, { recursive: true });
  if (existsSync(join(absolute, MANIFEST_NAME))) unlinkSync(join(absolute, MANIFEST_NAME));
  // Samples left from a larger dataset would be picked up by a reader that lists the folder.
  for (const name of readdirSync(absolute)) {
    const match = SAMPLE_PATTERN.exec(name);
    if (match && Number(match[1]) >= full.files) unlinkSync(join(absolute, name));
  }

  const build = assembler(full);
  let bytes = 0;
  let rawBytes = 0;
  let next = 0;
  const writer = async (): Promise<void> => {
    while (next < full.files) {
      const index = next++;
      const file = build.build(index);
      bytes += file.data.length;
      rawBytes += file.rawBytes;
      await writeFile(join(absolute, sampleName(index)), file.data);
    }
  };
  await Promise.all(Array.from({ length: Math.min(WRITE_CONCURRENCY, full.files) }, writer));

  const manifest: Manifest = {
    kind: 'ds-analyzer-dataset',
    generator: GENERATOR_VERSION,
    files: full.files,
    fileBytes: full.fileBytes,
    seed: full.seed,
    bytes,
    rawBytes,
  };
  await writeFile(join(absolute, MANIFEST_NAME), JSON.stringify(manifest, null, 2) + '\n');
  return { dir: absolute, files: full.files, bytes, reused: false };
}

/**
 * Paths of the sample files of a dataset folder, in index order: those the manifest names when there is one, otherwise
 * every sample-NNNNN.bin. Throws a UserError (input) when the folder is missing or holds no samples.
 */
export function listDatasetFiles(dir: string): string[] {
  const absolute = resolve(dir);
  if (!existsSync(absolute)) {
    throw inputError(EMULATOR_TEXT.noDatasetFolder(absolute));
  }
  const manifest = readManifest(absolute);
  if (manifest !== undefined) {
    return Array.from({ length: manifest.files }, (_, i) => join(absolute, sampleName(i)));
  }
  const names = readdirSync(absolute)
    .filter((name) => SAMPLE_PATTERN.test(name))
    .sort();
  if (names.length === 0) {
    throw inputError(EMULATOR_TEXT.noSamples(absolute));
  }
  return names.map((name) => join(absolute, name));
}
