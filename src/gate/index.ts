/** The CI gate: budgets, rules, verdict outputs. */
export { prepareGate, runGate, type GateOptions, type GateIo, type RawGateFlags } from './run-gate.js';
export { evaluateGate, type GateVerdict, type RuleOutcome } from './rules.js';
export { readGateConfig, parseGateConfig, GateConfigSchema, type GateConfig, type Budgets } from './config.js';
export { junitXml, writeJunit } from './junit.js';
export { stepSummaryMarkdown } from './step-summary.js';
export { renderVerdict } from './terminal.js';
