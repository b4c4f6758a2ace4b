/**
 * A what-if knob: one setting of the machine or the job that `whatif` can change, one module in this folder listed in
 * ./index.ts (docs/architecture.md, "A model knob"). whatif's --help builds its flags from these modules, so they
 * import only the light contracts (units.ts, errors.ts) and types: never the model.
 */
import type { Profile } from '../../schema/profile.js';
import type { FittedModel, Scenario } from '../model.js';

/** The knob flags as commander hands them over: strings, true for a flag without a value, undefined when not given. */
export type RawKnobFlags = Record<string, string | boolean | undefined>;

/** A knob's whatif flag, as --help and docs/cli.md show it. */
export interface KnobFlag {
  /** The flag and its argument, as commander takes it: `--cpus <n>`; no argument for a switch. */
  syntax: string;
  /** The help line. */
  help: string;
  /** The value commander gives when the flag is absent, shown in --help; absent: none. */
  defaultValue?: string;
}

/** One what-if knob (the type parameter: its parsed value). */
export interface Knob<V = unknown> {
  /** The flag's name without its dashes: `cpus`, `storage-bw`. */
  name: string;
  /** The flag. */
  flag: KnobFlag;
  /** The Scenario field the knob sets. */
  field: keyof Scenario;
  /**
   * The flag's text parsed, before the profile is read (every error names the flag: exit code 3, or 2 for a flag that
   * needs another); undefined where the value asks for the profiled setting (a default left as it is). A switch's text
   * is 'true'. `asked` is the query so far, which holds the settings of the flags in `reads`, for a flag that needs
   * another.
   */
  parse(text: string, asked: Partial<Scenario>): V | undefined;
  /** Flags whose settings its `parse` reads: they are parsed and set first (as their checks come first). */
  reads?: string[];
  /** Sets the parsed value on the query; absent: `query[field] = value` (unless `resolve` sets it). */
  set?(query: Partial<Scenario>, value: V): void;
  /** The setting when its flag is absent and the profile measured it; absent: as profiled. */
  profileDefault?(query: Partial<Scenario>, profile: Profile): void;
  /** Sets a value given relative to the profile (a share of its dataset), once the profile is read. */
  resolve?(query: Partial<Scenario>, value: V, profile: Profile): void;
  /**
   * The scenario fields the knob sets that only the fetch stage answers (a profile without the cold mode leaves them as
   * profiled), each with the words that name the flag in the answer; absent: none.
   */
  fetchStage?: Partial<Record<keyof Scenario, string>>;
  /**
   * The setting in the 'asked:' line of whatif's answer, or null where it is as profiled and goes unsaid. Absent: the
   * line's own words, which name cache, policy, CPUs, storage, accelerators, GPU speed-up, jobs and nodes
   * (report/whatif-terminal.ts), and leave the others unsaid there (their answers say them).
   */
  asked?(scenario: Scenario): string | null;
  /** Remote data's requests alone answer it: a profile that saw none says so in a caveat. */
  requestsOnly?: boolean;
  /**
   * The `validate` flag that measures the asked setting, where validate has a point kind for it
   * (validate/point-kinds.ts) and the profile did not already run it; null otherwise. Absent: validate has no point for
   * it.
   */
  validateFlag?(model: FittedModel, scenario: Scenario): string | null;
}

/** The name commander gives a flag's value: `storage-bw` becomes `storageBw`. */
export function knobAttribute(knob: Pick<Knob, 'name'>): string {
  return knob.name.replace(/-([a-z])/g, (_, letter: string) => letter.toUpperCase());
}
