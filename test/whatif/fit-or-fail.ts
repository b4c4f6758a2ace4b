import assert from 'node:assert/strict';
import type { Profile } from '../../src/schema/profile.js';
import { fitModel, type FitOptions, type FittedModel } from '../../src/whatif/model.js';

/** fitModel for a test that needs the model: a profile the model cannot fit fails the test with the reason. */
export function fitOrFail(profile: Profile, options?: FitOptions): FittedModel {
  const fit = fitModel(profile, options);
  assert.equal(fit.kind, 'fitted', fit.kind === 'not-enough-data' ? fit.reason : '');
  return (fit as { model: FittedModel }).model;
}
