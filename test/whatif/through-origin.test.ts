import assert from 'node:assert/strict';
import { test } from 'node:test';
import { throughOrigin } from '../../src/whatif/through-origin.js';

test('the curve runs from the origin through the points, then on at the last slope, never down', () => {
  const points = [
    { x: 2, y: 1.8 },
    { x: 4, y: 3.0 },
  ];
  assert.equal(throughOrigin(points, 1), 0.9, 'below the first point: on the line from the origin');
  assert.equal(throughOrigin(points, 3), 2.4);
  assert.equal(throughOrigin(points, 8), 5.4, "beyond: the last segment's 0.6 per unit");
  assert.equal(
    throughOrigin(
      [
        { x: 2, y: 2 },
        { x: 4, y: 1.5 },
      ],
      8,
    ),
    1.5,
    'a sweep that lost: flat past its end',
  );
  assert.equal(throughOrigin([{ x: 4, y: 2 }], 8), 4, 'one point: the line through the origin');
});
