/**
 * whatif's knob flags into a query: parsed before the profile is read (a bad flag is named before a missing profile),
 * then completed from the profile (a measured default, a share of its dataset).
 */
import type { Profile } from '../../schema/profile.js';
import type { Scenario } from '../model.js';
import { KNOBS } from './index.js';
import { knobAttribute, type Knob, type RawKnobFlags } from './knob.js';

/** A knob given on the command line, with its parsed value. */
export interface GivenKnob {
  knob: Knob;
  value: unknown;
}

/** The knob flags parsed: the query they set, and each flag given. */
export interface KnobQuery {
  /** The settings asked so far; `completeFromProfile` adds the ones that need the profile. */
  query: Partial<Scenario>;
  /** The knobs given, with their values, in the order they were set. */
  given: GivenKnob[];
}

/**
 * The knobs in the order their flags are parsed and set: --help's, except that a knob comes after the ones it reads
 * (--cache-policy partitioned reads --nodes), so that their errors come first and their settings before it.
 */
function knobsInOrder(): Knob[] {
  const ordered: Knob[] = [];
  const add = (knob: Knob): void => {
    if (ordered.includes(knob)) return;
    for (const name of knob.reads ?? []) add(KNOBS.find((k) => k.name === name)!);
    ordered.push(knob);
  };
  KNOBS.forEach(add);
  return ordered;
}

/** Parses every knob flag given (errors name the flag) and sets what needs no profile. */
export function parseKnobFlags(raw: RawKnobFlags): KnobQuery {
  const query: Partial<Scenario> = {};
  const given: GivenKnob[] = [];
  for (const knob of knobsInOrder()) {
    const text = raw[knobAttribute(knob)];
    if (text === undefined || text === false) continue;
    const value = knob.parse(String(text), query);
    if (value === undefined) continue;
    given.push({ knob, value });
    if (knob.set) knob.set(query, value);
    else if (!knob.resolve) (query as Record<string, unknown>)[knob.field] = value;
  }
  return { query, given };
}

/** The settings the profile supplies where their flag was absent (a measured network between nodes). */
export function profileDefaults(asked: KnobQuery, profile: Profile): void {
  for (const knob of KNOBS) {
    if (!asked.given.some((g) => g.knob === knob)) knob.profileDefault?.(asked.query, profile);
  }
}

/** The values given relative to the profile (a share of its dataset), set last. */
export function resolveAgainstProfile(asked: KnobQuery, profile: Profile): void {
  for (const { knob, value } of asked.given) knob.resolve?.(asked.query, value, profile);
}
