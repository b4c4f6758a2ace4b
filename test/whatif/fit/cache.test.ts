import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fitCache } from '../../../src/whatif/fit/cache.js';
import { sizeHistogram } from '../../../src/analysis/size-histogram.js';
import { loadProfile, modesOf, symbols, fittedValue } from './fixture.js';

test("fitCache: the dataset, the cache the host could give it, and the page cache's curve; B_memory shown from the analysis", () => {
  const profile = loadProfile();
  const fit = fittedValue(fitCache(profile, modesOf(profile), 250_000));
  assert.equal(fit.value.datasetBytes, profile.dataset.bytes);
  assert.equal(fit.value.samplesPerEpoch, profile.dataset.bytes / 250_000);
  // No budget in the profile: 90% of host memory, marked assumed.
  assert.equal(fit.value.defaultCacheBytes, Math.floor(profile.host.memBytes * 0.9));
  assert.deepEqual(symbols(fit), ['B_memory', 'D', 'n', 'S', 'M0', 'h(M)', 'X']);
  // The fixture's cold mode predates the count of other active file pages: 0, said to be assumed.
  const x = fit.parameters.find((p) => p.symbol === 'X')!;
  assert.equal(x.value, 0);
  assert.equal(x.note, 'assumed');
  assert.equal(fit.parameters.find((p) => p.symbol === 'M0')!.note, 'assumed');
  assert.equal(
    fit.parameters.find((p) => p.symbol === 'h(M)')!.value,
    profile.dataset.files,
    'every file simulated, at the mean size',
  );
  assert.match(fit.caveats.join('\n'), /no file-size histogram/);
  // The fixture does not record lru_gen: the kernel's two lists, and it says it assumed them.
  assert.equal(fit.value.pageCachePolicy.model, 'linux-two-list');
  assert.match(fit.value.pageCachePolicy.why, /does not record the kernel's lru_gen/);
  assert.match(
    fit.parameters.find((p) => p.symbol === 'h(M)')!.note!,
    /does not record the kernel's lru_gen/,
    'the parameter says the policy and why',
  );
  assert.match(fit.caveats[fit.caveats.length - 1], /Linux's two lists over whole files/);
});

test('fitCache: a recorded budget and histogram are used; a large dataset is simulated scaled down and says so', () => {
  const profile = loadProfile();
  profile.dataset.memoryBudgetBytes = 64 << 20;
  profile.dataset.fileBytesHistogram = sizeHistogram(Array.from({ length: 65 }, (_, i) => 100_000 + i * 5000));
  profile.analysis!.memoryReadBytesPerSec = null;
  const fit = fittedValue(fitCache(profile, modesOf(profile), 250_000, { maxSimulatedItems: 20 }));
  assert.equal(fit.value.defaultCacheBytes, 64 << 20);
  assert.ok(!symbols(fit).includes('B_memory'));
  const lru = fit.parameters.find((p) => p.symbol === 'h(M)')!;
  assert.equal(lru.value, 20);
  assert.match(lru.note!, /^scaled from 65 files; /);
  assert.doesNotMatch(fit.caveats.join('\n'), /histogram/);
});

test('fitCache: a dataset of no bytes is not enough data', () => {
  const profile = loadProfile();
  profile.dataset.bytes = 0;
  const fit = fitCache(profile, modesOf(profile), 250_000);
  assert.equal(fit.kind === 'not-enough-data' && fit.missing, 'dataset.bytes');
});

test("fitCache: the other active file pages the cold mode found are in the kernel's lists, and lower a small cache's hit ratio", () => {
  const profile = loadProfile();
  const without = fittedValue(fitCache(profile, modesOf(profile), 250_000));
  profile.modes.cold!.state.otherActiveFile = { bytes: profile.dataset.bytes, source: '/proc/meminfo Active(file)' };
  const fit = fittedValue(fitCache(profile, modesOf(profile), 250_000));
  const x = fit.parameters.find((p) => p.symbol === 'X')!;
  assert.equal(x.value, profile.dataset.bytes);
  assert.match(x.source, /cold state\.otherActiveFile \(\/proc\/meminfo Active\(file\), the dataset evicted\)/);
  const third = profile.dataset.bytes / 3;
  assert.ok(
    fit.value.pageCache.steady(third) < without.value.pageCache.steady(third),
    `${fit.value.pageCache.steady(third)} vs ${without.value.pageCache.steady(third)}`,
  );
});
