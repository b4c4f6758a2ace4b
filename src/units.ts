import { valueError } from './errors.js';

// Decimal and binary multipliers, as users write them: 64G, 512MiB, 1.5TB.
// A bare G/M/K means the decimal unit (as in 'df -H' and storage datasheets).
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

/** Parses a byte size like '64G', '512MiB', '1.5TB', '1000'; throws a UserError naming `what`. */
export function parseSize(text: string, what = 'size'): number {
  const match = SIZE_PATTERN.exec(text);
  const multiplier = match ? MULTIPLIERS[match[2].toLowerCase()] : undefined;
  if (!match || multiplier === undefined) {
    throw valueError(
      `cannot parse ${what} '${text}': use a number with an optional unit, e.g. 64G, 512MiB, 1.5TB`,
    );
  }
  const bytes = Number(match[1]) * multiplier;
  if (!Number.isFinite(bytes) || bytes <= 0) {
    throw valueError(`${what} '${text}' must be greater than zero`);
  }
  return Math.round(bytes);
}

/** Parses a rate like '50MB/s', '1.5GiB/s' or '200M' into bytes per second. */
export function parseRate(text: string, what = 'rate'): number {
  const withoutPerSecond = text.replace(/\s*\/\s*s(ec)?\s*$/i, '');
  try {
    return parseSize(withoutPerSecond, what);
  } catch {
    throw valueError(`cannot parse ${what} '${text}': use a rate such as 50MB/s, 1.5GiB/s or 200M`);
  }
}

/** Parses a positive number with a unit-free check; names the flag in the error. */
export function parsePositiveNumber(text: string, what: string): number {
  const value = Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0) {
    throw valueError(`${what} must be a positive number, got '${text}'`);
  }
  return value;
}

/** Parses a positive integer; names the flag in the error. */
export function parsePositiveInt(text: string, what: string): number {
  const value = parsePositiveNumber(text, what);
  if (!Number.isInteger(value)) throw valueError(`${what} must be a whole number, got '${text}'`);
  return value;
}

/** Parses a percentage ('5%') or a fraction ('0.05') into a fraction. */
export function parseFraction(text: string, what: string): number {
  const percent = /^\s*(\d+(?:\.\d+)?)\s*%\s*$/.exec(text);
  const value = percent ? Number(percent[1]) / 100 : Number(text);
  if (text.trim() === '' || !Number.isFinite(value) || value <= 0 || value >= 1) {
    throw valueError(`${what} must be a fraction between 0 and 1 or a percentage like 5%, got '${text}'`);
  }
  return value;
}

/** Parses a duration: '90', '90s', '5m', '1h' into seconds. */
export function parseDurationSec(text: string, what: string): number {
  const match = /^\s*(\d+(?:\.\d+)?)\s*(s|m|h)?\s*$/.exec(text);
  if (!match) throw valueError(`cannot parse ${what} '${text}': use seconds or a unit, e.g. 90, 90s, 5m`);
  const seconds = Number(match[1]) * ({ s: 1, m: 60, h: 3600 } as const)[(match[2] ?? 's') as 's' | 'm' | 'h'];
  if (seconds <= 0) throw valueError(`${what} must be greater than zero, got '${text}'`);
  return seconds;
}

/** Formats bytes in binary units for people: 1.5 GiB. */
export function formatBytes(bytes: number): string {
  const units = ['B', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (Math.abs(value) >= 1024 && unit < units.length - 1) {
    value /= 1024;
    unit++;
  }
  return `${value.toFixed(unit === 0 ? 0 : 1)} ${units[unit]}`;
}

/** Formats a byte rate: 48.1 MB/s (decimal, as storage is sold). */
export function formatRate(bytesPerSec: number): string {
  if (bytesPerSec >= 1e9) return `${(bytesPerSec / 1e9).toFixed(2)} GB/s`;
  if (bytesPerSec >= 1e6) return `${(bytesPerSec / 1e6).toFixed(1)} MB/s`;
  return `${(bytesPerSec / 1e3).toFixed(1)} kB/s`;
}
