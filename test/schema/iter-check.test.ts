import assert from 'node:assert/strict';
import test from 'node:test';
import fc from 'fast-check';
import { IterEventSchema, MAX_ITERATION_MS } from '../../src/schema/events.js';
import { checkedIterEvent } from '../../src/schema/iter-check.js';

// Values at and around each rule's edges, and of the wrong kinds.
const edgy = fc.oneof(
  fc.constantFrom(
    0,
    1,
    -1,
    0.5,
    -0.5,
    MAX_ITERATION_MS,
    MAX_ITERATION_MS + 1,
    2 ** 53,
    2 ** 53 - 1,
    1e300,
    -0,
    null,
    '1',
    true,
    [],
    {},
  ),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.nat(),
);
const maybe = <T>(arb: fc.Arbitrary<T>) => fc.option(arb, { nil: undefined });
const iterLike = fc.record(
  {
    v: fc.constantFrom(1, 2, '1'),
    type: fc.constantFrom('iter', 'end', 'ITER'),
    t: edgy,
    rank: maybe(edgy),
    i: edgy,
    waitMs: edgy,
    computeMs: edgy,
    samples: edgy,
    bytes: maybe(edgy),
    processCpuMs: maybe(edgy),
    extra: maybe(fc.string()),
  },
  { requiredKeys: ['v', 'type'] },
);
// JSON as a job writes it: no undefined fields.
const asJson = (value: object): unknown => JSON.parse(JSON.stringify(value));

test('checkedIterEvent vouches only for what IterEventSchema accepts, and gives what it parses', () => {
  fc.assert(
    fc.property(iterLike, (raw) => {
      const value = asJson(raw);
      const checked = checkedIterEvent(value);
      if (checked === null) return;
      const parsed = IterEventSchema.safeParse(value);
      assert.ok(parsed.success, `the check took ${JSON.stringify(value)}, the schema did not`);
      assert.deepEqual(checked, parsed.data);
    }),
    { numRuns: 5000 },
  );
});

test('checkedIterEvent takes every well-formed iteration (the fast path is the one taken)', () => {
  const valid = fc.record(
    {
      v: fc.constant(1),
      type: fc.constant('iter'),
      t: fc.double({ min: 0, max: 2e12, noNaN: true }),
      rank: fc.nat(),
      i: fc.nat(),
      waitMs: fc.double({ min: 0, max: MAX_ITERATION_MS, noNaN: true }),
      computeMs: fc.double({ min: 0, max: MAX_ITERATION_MS, noNaN: true }),
      samples: fc.nat(),
      bytes: fc.double({ min: 0, max: 1e15, noNaN: true }),
      processCpuMs: fc.double({ min: 0, max: 1e9, noNaN: true }),
    },
    { requiredKeys: ['v', 'type', 't', 'i', 'waitMs', 'computeMs', 'samples'] },
  );
  fc.assert(
    fc.property(valid, (raw) => {
      const value = asJson(raw);
      assert.ok(IterEventSchema.safeParse(value).success);
      assert.deepEqual(checkedIterEvent(value), IterEventSchema.parse(value));
    }),
    { numRuns: 2000 },
  );
});

test('checkedIterEvent leaves other events and malformed iterations to the schema', () => {
  assert.equal(checkedIterEvent({ v: 1, type: 'end', t: 1, reason: 'budget', iterations: 3 }), null);
  assert.equal(checkedIterEvent({ v: 1, type: 'iter', t: 1, i: 0.5, waitMs: 1, computeMs: 1, samples: 8 }), null);
  assert.equal(
    checkedIterEvent({ v: 1, type: 'iter', t: 1, i: 0, waitMs: MAX_ITERATION_MS + 1, computeMs: 1, samples: 8 }),
    null,
  );
  assert.equal(checkedIterEvent([1]), null);
  assert.equal(checkedIterEvent(null), null);
});
