// Messages of the value parsers in units.ts (sizes, rates, counts, shares, durations), shown to users: one line each,
// naming the flag and the forms it takes (exit code 3, BadValue).

/** The forms a cache size may take, as error messages list them. */
export const CACHE_SIZE_FORMS = 'bytes with a unit (64G, 512MiB, 1.5TB), a share of the dataset (50%), or 0';

/** Messages of the value parsers' errors. */
export const UNITS_TEXT = {
  notASize: (what: string, text: string) =>
    `cannot parse ${what} '${text}': use a number with an optional unit, e.g. 64G, 512MiB, 1.5TB`,
  underOneByte: (what: string, text: string) => `${what} '${text}' must be at least one byte`,
  shareOver100: (what: string, text: string) =>
    `${what} '${text}': a share of the dataset is at most 100%; for a cache larger than the dataset give ` +
    `bytes, e.g. 64G`,
  notACacheSize: (what: string, text: string, forms: string) => `cannot parse ${what} '${text}': use ${forms}`,
  cacheTooLarge: (what: string, text: string) => `${what} '${text}' is too large: use ${CACHE_SIZE_FORMS}`,
  emptyEntry: (what: string, text: string, forms: string) =>
    `${what} '${text}' has an empty entry: give a comma list of ${forms}, e.g. 25%,50%,8GiB`,
  notARate: (what: string, text: string) =>
    `cannot parse ${what} '${text}': use a rate such as 50MB/s, 1.5GiB/s or 200M`,
  notPositive: (what: string, text: string) => `${what} must be a positive number, got '${text}'`,
  notWhole: (what: string, text: string) => `${what} must be a whole number, got '${text}'`,
  notCounts: (what: string, text: string, min: number) =>
    `${what} takes whole numbers of at least ${min} separated by commas, e.g. ${min + 1},${min + 2}; got '${text}'`,
  countTwice: (what: string, text: string) => `${what} lists a count twice: '${text}'`,
  notAFraction: (what: string, text: string) =>
    `${what} must be a fraction between 0 and 1 or a percentage like 5%, got '${text}'`,
  notADuration: (what: string, text: string) =>
    `cannot parse ${what} '${text}': use seconds or a unit, e.g. 90, 90s, 5m`,
  notAboveZero: (what: string, text: string) => `${what} must be greater than zero, got '${text}'`,
  notAPort: (what: string, text: string, max: number) => `${what}: '${text}' is not a port (1-${max})`,
  notALatency: (what: string, text: string) =>
    `cannot parse ${what} '${text}': use milliseconds or a unit, e.g. 40, 40ms, 0.04s`,
} as const;
