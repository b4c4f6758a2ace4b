// The gate's rules by name, apart from the budgets (config.ts) and the config file's schema (config-file.ts), which
// both need them: one leaf, no circle.

/** Names of the rules, in the order they are reported. */
export const RULE_IDS = [
  'fetchStall',
  'prepStall',
  'totalStall',
  'checkpointStall',
  'timeToFirstBatch',
  'throughput',
  'regression',
] as const;
export type RuleId = (typeof RULE_IDS)[number];
