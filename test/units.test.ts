import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import {
  formatBytes,
  parseCacheSize,
  parseCacheSizeList,
  parseDurationSec,
  parseFraction,
  parseRate,
  parseSize,
  resolveCacheSize,
  type CacheSize,
} from '../src/units.js';
import { ExitCode, UserError } from '../src/errors.js';

/** Writes a cache size back in a form parseCacheSize reads ('1073741824' or '50%'), for the round trips below. */
function formatCacheSize(size: CacheSize): string {
  // toPrecision drops the binary noise of share * 100 (0.07 * 100 = 7.000000000000001).
  return 'bytes' in size ? String(size.bytes) : `${Number((size.share * 100).toPrecision(12))}%`;
}

test('sizes in decimal and binary units', () => {
  assert.equal(parseSize('64G'), 64e9);
  assert.equal(parseSize('512MiB'), 512 * 2 ** 20);
  assert.equal(parseSize('1.5TB'), 1.5e12);
  assert.equal(parseSize('1000'), 1000);
  assert.equal(parseSize('4 kib'), 4096);
});

test('rates with and without /s', () => {
  assert.equal(parseRate('50MB/s'), 50e6);
  assert.equal(parseRate('1.5GiB/s'), Math.round(1.5 * 2 ** 30));
  assert.equal(parseRate('200M'), 200e6);
});

test('bad sizes are BadValue errors naming the flag', () => {
  for (const bad of ['64X', '', 'G', '-5G', '0', '1e3', 'NaN', '5 GB extra']) {
    assert.throws(
      () => parseSize(bad, '--cache'),
      (error: unknown) =>
        error instanceof UserError && error.exitCode === ExitCode.BadValue && error.message.includes('--cache'),
      bad,
    );
  }
});

test('a size under half a byte is no size: it rounds to none', () => {
  assert.throws(() => parseSize('.1'), /'\.1' must be at least one byte/);
  assert.equal(parseSize('0.5'), 1);
});

test('fractions, percentages and durations', () => {
  assert.equal(parseFraction('5%', '--precision'), 0.05);
  assert.equal(parseFraction('0.02', '--precision'), 0.02);
  assert.throws(() => parseFraction('150%', '--precision'), UserError);
  assert.equal(parseDurationSec('90', '--timeout'), 90);
  assert.equal(parseDurationSec('5m', '--timeout'), 300);
  assert.throws(() => parseDurationSec('soon', '--timeout'), UserError);
});

test('property: any positive size written with a unit parses back to value x multiplier', () => {
  const units: [string, number][] = [
    ['', 1],
    ['K', 1e3],
    ['MB', 1e6],
    ['GiB', 2 ** 30],
    ['t', 1e12],
  ];
  fc.assert(
    fc.property(fc.integer({ min: 1, max: 1_000_000 }), fc.constantFrom(...units), (value, [unit, multiplier]) => {
      assert.equal(parseSize(`${value}${unit}`), Math.round(value * multiplier));
    }),
  );
});

test('property: arbitrary text either parses to a positive size or throws a UserError', () => {
  fc.assert(
    fc.property(fc.string(), (text) => {
      try {
        assert.ok(parseSize(text) > 0);
      } catch (error) {
        assert.ok(error instanceof UserError, String(error));
      }
    }),
  );
});

// The one cache-size parser (issue 13, item 4): whatif and validate accept the same forms.
describe('cache sizes', () => {
  const FORMS = /bytes with a unit \(64G, 512MiB, 1\.5TB\), a share of the dataset \(50%\), or 0/;

  test('bytes with units, shares of the dataset, and 0', () => {
    assert.deepEqual(parseCacheSize('64G'), { bytes: 64e9 });
    assert.deepEqual(parseCacheSize('512MiB'), { bytes: 512 * 2 ** 20 });
    assert.deepEqual(parseCacheSize('1.5TB'), { bytes: 1.5e12 });
    assert.deepEqual(parseCacheSize('0'), { bytes: 0 });
    assert.deepEqual(parseCacheSize('0G'), { bytes: 0 });
    assert.deepEqual(parseCacheSize('50%'), { share: 0.5 });
    assert.deepEqual(parseCacheSize('0%'), { share: 0 });
    assert.deepEqual(parseCacheSize('100%'), { share: 1 });
    assert.deepEqual(parseCacheSize(' 12.5 % '), { share: 0.125 });
  });

  test('a share resolves against the dataset, bytes stay bytes', () => {
    assert.equal(resolveCacheSize({ share: 0.5 }, 1001), 501);
    assert.equal(resolveCacheSize({ share: 0 }, 1001), 0);
    assert.equal(resolveCacheSize({ bytes: 7 }, 1001), 7);
  });

  test('junk is one line naming the flag and the accepted forms (exit code 3)', () => {
    for (const bad of [
      '64X',
      '',
      'G',
      '-5G',
      '-5%',
      '1e3',
      'NaN',
      'half',
      '5 GB extra',
      '%',
      '50%%',
      '9'.repeat(30) + 'T',
    ]) {
      assert.throws(
        () => parseCacheSize(bad, '--cache'),
        (error: unknown) =>
          error instanceof UserError &&
          error.exitCode === ExitCode.BadValue &&
          !error.message.includes('\n') &&
          error.message.includes(`--cache '${bad}'`) &&
          FORMS.test(error.message),
        JSON.stringify(bad),
      );
    }
  });

  test('a share above 100% is refused with the way to ask for more than the dataset', () => {
    assert.throws(
      () => parseCacheSize('150%', '--cache'),
      /--cache '150%': a share of the dataset is at most 100%; .* give bytes, e\.g\. 64G/,
    );
  });

  test("lists: sizes, shares, 0 and the command's own words; an empty entry is an error", () => {
    assert.deepEqual(parseCacheSizeList('0, 25%,8GiB,recommended', '--cache', ['recommended']), [
      { bytes: 0 },
      { share: 0.25 },
      { bytes: 8 * 2 ** 30 },
      { word: 'recommended' },
    ]);
    assert.throws(() => parseCacheSizeList('50%,,80%', '--cache'), /--cache '50%,,80%' has an empty entry/);
    assert.throws(
      () => parseCacheSizeList('50%,lots', '--cache', ['recommended']),
      /cannot parse --cache 'lots': use .*, 0 or 'recommended'$/,
    );
    assert.throws(() => parseCacheSizeList('recommended', '--cache'), FORMS);
  });

  test('property: bytes, with or without a unit, round-trip through formatCacheSize', () => {
    const units: [string, number][] = [
      ['', 1],
      ['b', 1],
      ['K', 1e3],
      ['kB', 1e3],
      ['MiB', 2 ** 20],
      ['GB', 1e9],
      ['GiB', 2 ** 30],
      ['t', 1e12],
      ['TiB', 2 ** 40],
    ];
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 100_000 }), fc.constantFrom(...units), (value, [unit, multiplier]) => {
        if (value * multiplier > Number.MAX_SAFE_INTEGER) {
          assert.throws(() => parseCacheSize(`${value}${unit}`), /too large/);
          return;
        }
        const parsed = parseCacheSize(`${value}${unit}`);
        assert.deepEqual(parsed, { bytes: Math.round(value * multiplier) });
        assert.deepEqual(parseCacheSize(formatCacheSize(parsed)), parsed);
      }),
    );
  });

  test('property: shares with up to 4 decimals round-trip exactly, and resolve within the dataset', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 0, max: 1_000_000 }),
        fc.integer({ min: 0, max: 2 ** 40 }),
        (tenThousandths, datasetBytes) => {
          const percent = tenThousandths / 10_000;
          const parsed = parseCacheSize(`${percent}%`);
          assert.deepEqual(parsed, { share: percent / 100 });
          assert.deepEqual(parseCacheSize(formatCacheSize(parsed)), parsed);
          const bytes = resolveCacheSize(parsed, datasetBytes);
          assert.ok(bytes >= 0 && bytes <= datasetBytes);
        },
      ),
    );
  });

  test('formatBytes picks the binary unit, with one decimal unless told', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(350 * 262144), '87.5 MiB');
    assert.equal(formatBytes(1.46 * 2 ** 30), '1.5 GiB');
    assert.equal(formatBytes(1.46 * 2 ** 30, 2), '1.46 GiB');
    assert.equal(formatBytes(512, 2), '512 B');
  });

  test('property: what formatBytes prints parses back to within its rounding', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 2 ** 50 }), (bytes) => {
        const parsed = parseCacheSize(formatBytes(bytes));
        assert.ok('bytes' in parsed);
        assert.ok(
          Math.abs(parsed.bytes - bytes) <= 0.05 * bytes + 0.5,
          `${formatBytes(bytes)} -> ${parsed.bytes}, not ${bytes}`,
        );
      }),
    );
  });

  test('property: arbitrary text is a size, a share in [0, 1], or one line naming --cache and the forms', () => {
    fc.assert(
      fc.property(fc.oneof(fc.string(), fc.stringMatching(/^[0-9.%a-zA-Z ,-]{0,8}$/)), (text) => {
        let size: CacheSize;
        try {
          size = parseCacheSize(text, '--cache');
        } catch (error) {
          assert.ok(error instanceof UserError && error.exitCode === ExitCode.BadValue, String(error));
          assert.ok(!error.message.includes('\n') && error.message.includes('--cache'), error.message);
          assert.ok(FORMS.test(error.message) || /at most 100%/.test(error.message), error.message);
          return;
        }
        if ('bytes' in size) assert.ok(Number.isSafeInteger(size.bytes) && size.bytes >= 0);
        else assert.ok(size.share >= 0 && size.share <= 1);
      }),
    );
  });
});
