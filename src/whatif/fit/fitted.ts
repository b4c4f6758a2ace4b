/**
 * What each of the model's parameter fitters (src/whatif/fit/) returns: the fitted values with the rows that name their
 * sources, or the answer that the profile lacks what the fit needs. Not enough data is an answer of the pure core, not
 * an error: the command layer decides what it means for the user (whatif exits with code 4; the report shows the reason
 * instead of curves).
 */
import type { Mode } from '../../schema/events.js';
import { MISSING_TEXT } from '../advice-text.js';
import type { z } from 'zod';
import type { ModelParameterSchema } from '../../schema/whatif-output.js';

/** One parameter of the model as the report lists it, with the measurement it comes from. */
export type ModelParameter = z.infer<typeof ModelParameterSchema>;

/** What one fitter found: its values, the parameter rows that say where each came from, and its caveats. */
export interface Fitted<T> {
  /** Tells a fit from NotEnoughData. */
  kind: 'fitted';
  /** The fitted values, in SI units (seconds, bytes). */
  value: T;
  /** The rows for the report, in the order the model lists them; each names its source. */
  parameters: ModelParameter[];
  /** Assumptions and limits of this fit, in words, in the order the model lists them. */
  caveats: string[];
}

/** The profile lacks a measurement the model needs (node-clinic's "not enough data" verdict). */
export interface NotEnoughData {
  /** Tells this answer from a fit. */
  kind: 'not-enough-data';
  /** The profile field that is missing or unusable, e.g. 'modes.cold.storageReadBytesPerSec'. */
  missing: string;
  /** The mode that measures it. */
  mode: Mode;
  /** One line naming the field and how to measure it, for the user. */
  reason: string;
}

/** The answer that `field`, measured by `mode`, is missing. */
export function notEnoughData(field: string, mode: Mode): NotEnoughData {
  return { kind: 'not-enough-data', missing: field, mode, reason: MISSING_TEXT.field(field, mode) };
}

/** Whether an answer of the what-if core is "not enough data" (for results that carry no kind of their own). */
export function isNotEnoughData(answer: object): answer is NotEnoughData {
  return (answer as { kind?: unknown }).kind === 'not-enough-data';
}

/** A parameter row; one without a note carries no `note` key. */
export function parameter(
  symbol: string,
  name: string,
  value: number,
  unit: string,
  source: string,
  proven: boolean,
  note?: string,
): ModelParameter {
  return note === undefined
    ? { symbol, name, value, unit, source, proven }
    : { symbol, name, value, unit, source, proven, note };
}
