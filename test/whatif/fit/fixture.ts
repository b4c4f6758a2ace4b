import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { ProfileSchema, type Profile } from '../../../src/schema/profile.js';
import type { Fitted, NotEnoughData } from '../../../src/whatif/fit/fitted.js';
import { measuredModes, type MeasuredMode, type MeasuredModes } from '../../../src/whatif/fit/modes.js';

const FIXTURE = new URL('../../../../test/fixtures/profiles/emulated-quick.json', import.meta.url);

/** The stored emulated profile: three proven modes, one rank, 2 CPUs, storage throttled to 12.5 MB/s and read at it. */
export const loadProfile = (): Profile => ProfileSchema.parse(JSON.parse(readFileSync(FIXTURE, 'utf8')));

/** The value of a fit; fails the test with the reason when the fitter found not enough data. */
export function fittedValue<T>(fit: Fitted<T> | NotEnoughData): Fitted<T> {
  assert.equal(fit.kind, 'fitted', fit.kind === 'not-enough-data' ? fit.reason : '');
  return fit as Fitted<T>;
}

/** The profile's three measured modes (the fixture has a cold mode: the test fails where it has none). */
export function modesOf(profile: Profile): MeasuredModes & { cold: MeasuredMode } {
  const modes = fittedValue(measuredModes(profile)).value;
  assert.ok(modes.cold, 'the fixture profile has a measured cold mode');
  return modes as MeasuredModes & { cold: MeasuredMode };
}

/** The symbols of a fit's parameter rows, in order. */
export const symbols = (fit: Fitted<unknown>): string[] => fit.parameters.map((p) => p.symbol);
