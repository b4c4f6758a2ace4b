import { valueError } from './errors.js';
import { CACHE_SIZE_FORMS, UNITS_TEXT } from './units-text.js';

// Decimal and binary multipliers, as users write them: 64G, 512MiB, 1.5TB. A bare G/M/K means the decimal unit (as in
// 'df -H' and storage datasheets).
const MULTIPLIERS: Record<string, number> = {
  '': 1,
  b: 1,
  k: 1e3,
  kb: 1e3,
  m: 1e6,
  mb: 1e6,
  g: 1e9,
  gb: 1e9,
  t: 1e12,
  tb: 1e12,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

const SIZE_PATTERN = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*([a-zA-Z]*)\s*$/;

/** '64G', '512MiB', '1.5TB', '1000' as bytes (not rounded), or null when the text is not such a size. */
function sizeBytes(text: string): number | null {
  const match = SIZE_PATTERN.exec(text);
  const multiplier = match ? MULTIPLIERS[match[2].toLowerCase()] : undefined;
  return match && multiplier !== undefined ? Number(match[1]) * multiplier : null;
}

/** Parses a byte size like '64G', '512MiB', '1.5TB', '1000'; throws a UserError naming `what`. */
export function parseSize(text: string, what = 'size'): number {
  const bytes = sizeBytes(text);
  if (bytes === null) {
    throw valueError(UNITS_TEXT.notASize(what, text));
  }
  // Under half a byte rounds to none: '.1' is no size either.
  if (!Number.isFinite(bytes) || Math.round(bytes) <= 0) {
    throw valueError(UNITS_TEXT.underOneByte(what, text));
  }
  return Math.round(bytes);
}

/**
 * A cache size as the user wrote it: bytes, or a share of the dataset that is resolved once the dataset's size is known
 * (resolveCacheSize). One parser for every command that takes a cache size, so whatif, validate and the rest accept the
 * same forms.
 */
export type CacheSize = { bytes: number } | { share: number };

const SHARE_PATTERN = /^\s*(\d+(?:\.\d+)?|\.\d+)\s*%\s*$/;

/**
 * Parses one cache size: '64G', '512MiB', '1.5TB', '1000', '0' (no cache: every read from storage) or '50%' (half the
 * dataset). Throws a one-line BadValue error naming `what` and the accepted forms.
 */
export function parseCacheSize(text: string, what = '--cache'): CacheSize {
  const share = SHARE_PATTERN.exec(text);
  if (share) {
    const value = Number(share[1]) / 100;
    if (value > 1) {
      throw valueError(UNITS_TEXT.shareOver100(what, text));
    }
    return { share: value };
  }
  const raw = sizeBytes(text);
  if (raw === null) throw valueError(UNITS_TEXT.notACacheSize(what, text, CACHE_SIZE_FORMS));
  const bytes = Math.round(raw);
  if (!Number.isSafeInteger(bytes)) throw valueError(UNITS_TEXT.cacheTooLarge(what, text));
  return { bytes };
}

/**
 * Parses a comma list of cache sizes ('25%,50%,8GiB'); entries equal to one of `words` (validate's 'recommended') come
 * back as `{ word }`. An empty entry is an error, not skipped: '50%,,80%' is a typo.
 */
export function parseCacheSizeList<W extends string>(
  text: string,
  what: string,
  words: readonly W[] = [],
): (CacheSize | { word: W })[] {
  const forms = words.length
    ? `${CACHE_SIZE_FORMS.replace(/, or 0$/, ', 0')} or ${words.map((w) => `'${w}'`).join(', ')}`
    : CACHE_SIZE_FORMS;
  return text.split(',').map((part) => {
    const entry = part.trim();
    if (entry === '') throw valueError(UNITS_TEXT.emptyEntry(what, text, forms));
    if ((words as readonly string[]).includes(entry)) return { word: entry as W };
    try {
      return parseCacheSize(entry, what);
    } catch (error) {
      // Name every accepted form, the words included.
      if (words.length && error instanceof Error && error.message.startsWith('cannot parse')) {
        throw valueError(UNITS_TEXT.notACacheSize(what, entry, forms));
      }
      throw error;
    }
  });
}

/** Bytes of a cache size for a dataset of `datasetBytes`. */
export function resolveCacheSize(size: CacheSize, datasetBytes: number): number {
  return 'bytes' in size ? size.bytes : Math.round(size.share * datasetBytes);
}

/** Parses a rate like '50MB/s', '1.5GiB/s' or '200M' into bytes per second. */
export function parseRate(text: string, what = 'rate'): number {
  const withoutPerSecond = text.replace(/\s*\/\s*s(ec)?\s*$/i, '');
  try {
    return parseSize(withoutPerSecond, what);
  } catch {
    throw valueError(UNITS_TEXT.notARate(what, text));
  }
}

/** Parses a positive number with a unit-free check; names the flag in the error. */
export function parsePositiveNumber(text: string, what: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw valueError(UNITS_TEXT.notPositive(what, text));
  }
  return value;
}

/** Parses a positive integer; names the flag in the error. */
export function parsePositiveInt(text: string, what: string): number {
  const value = parsePositiveNumber(text, what);
  if (!Number.isInteger(value)) throw valueError(UNITS_TEXT.notWhole(what, text));
  return value;
}

/** Parses a list of distinct whole numbers of at least `min` ('0,2,4'); names the flag in the error. */
export function parseCountList(text: string, what: string, min = 0): number[] {
  const counts = text.split(',').map((part) => {
    const value = Number(part.trim());
    if (part.trim() === '' || !Number.isInteger(value) || value < min) {
      throw valueError(UNITS_TEXT.notCounts(what, text, min));
    }
    return value;
  });
  if (new Set(counts).size !== counts.length) throw valueError(UNITS_TEXT.countTwice(what, text));
  return counts;
}

/** Parses a percentage ('5%') or a fraction ('0.05') into a fraction. */
export function parseFraction(text: string, what: string): number {
  const percent = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  const value = percent ? Number(percent[1]) / 100 : Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value >= 1) {
    throw valueError(UNITS_TEXT.notAFraction(what, text));
  }
  return value;
}

/** Parses a duration: '90', '90s', '5m', '1h' into seconds. */
export function parseDurationSec(text: string, what: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/.exec(text);
  if (!match) throw valueError(UNITS_TEXT.notADuration(what, text));
  const seconds = Number(match[1]) * ({ s: 1, m: 60, h: 3600 } as const)[(match[2] ?? 's') as 's' | 'm' | 'h'];
  if (seconds <= 0) throw valueError(UNITS_TEXT.notAboveZero(what, text));
  return seconds;
}

/**
 * A latency: milliseconds by default or with ms, or seconds with s ('50', '50ms', '0.05s'); 0 allowed (no latency).
 * Seconds out.
 */
export function parseLatencySec(text: string, what: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(ms|s)?\s*$/.exec(text);
  if (!match) throw valueError(UNITS_TEXT.notALatency(what, text));
  return Number(match[1]) / (match[2] === 's' ? 1 : 1000);
}

/**
 * A plain number with `digits` decimals; exponent form from 1e9 on, so an absurd value (a hostile profile) cannot widen
 * a table.
 */
export function formatNumber(value: number, digits = 1): string {
  return Math.abs(value) >= 1e9 ? value.toExponential(2) : value.toFixed(digits);
}

/** A fraction as a percentage: percent(0.1234) is '12.3%', percent(0.1234, 0) '12%'. */
export function percent(fraction: number, digits = 1): string {
  return `${(fraction * 100).toFixed(digits)}%`;
}

/**
 * Formats bytes in binary units for people: 1.5 GiB. `digits` decimals above whole bytes; sizes read against each other
 * (a cgroup's limit and its usage) take 2, so that 1.46 GiB and 1.54 GiB do not both read 1.5 GiB.
 */
export function formatBytes(bytes: number, digits = 1): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : digits)} ${units[unit]}`;
}

/** Formats a byte rate: 48.1 MB/s (decimal, as storage is sold). */
export function formatRate(bytesPerSec: number): string {
  if (bytesPerSec >= 1e9) return `${(bytesPerSec / 1e9).toFixed(2)} GB/s`;
  if (bytesPerSec >= 1e6) return `${(bytesPerSec / 1e6).toFixed(1)} MB/s`;
  return `${(bytesPerSec / 1e3).toFixed(1)} kB/s`;
}

/** Parses a TCP port, 1 to `max` (a port and the next one, for a flag that takes two: 65534); names the flag. */
export function parsePort(text: string, what: string, max = 65535): number {
  const port = Number(text);
  if (!Number.isInteger(port) || port < 1 || port > max) throw valueError(UNITS_TEXT.notAPort(what, text, max));
  return port;
}
