/**
 * JUnit XML of a gate verdict, one test case per rule, via junit-report-builder (maintained; escapes XML). CI systems
 * (GitHub test reporters, GitLab, Jenkins) show each rule as a test; a warn-level failure passes with the warning in
 * its system-out, since JUnit has no warning state.
 */
import { createRequire } from 'node:module';
import type { Builder } from 'junit-report-builder';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { GateVerdict } from '../gate/rules.js';

// The package is CommonJS (module.exports = builder) while its types declare a default export; under NodeNext that
// types it as `.default`. Take whichever exists. Required on use: the library costs a quarter second at start-up, and
// only --junit needs it.
const loadJunit = (): Builder => {
  const junitModule = createRequire(import.meta.url)('junit-report-builder') as Builder & { default?: Builder };
  return junitModule.default ?? junitModule;
};

/** The JUnit XML text of a verdict. */
export function junitXml(verdict: GateVerdict, profilePath: string): string {
  const builder = loadJunit().newBuilder();
  const suite = builder
    .testSuite()
    .name(`ds-analyzer gate: ${clean(verdict.jobName)}`)
    .property('profile', clean(profilePath));
  for (const rule of verdict.rules) {
    const testCase = suite
      .testCase()
      .className('ds-analyzer.gate')
      .name(`${rule.name} ${rule.expected}`)
      .property('level', rule.level)
      .property('actual', clean(rule.actual))
      .property('source', clean(rule.source));
    const detail = `${rule.name}: expected ${rule.expected}, actual ${rule.actual}${rule.note ? `; ${rule.note}` : ''}`;
    if (rule.result === 'fail') testCase.failure(clean(detail), 'budget');
    else testCase.standardOutput(clean(rule.result === 'warn' ? `WARNING (level warn): ${detail}` : detail));
  }
  if (verdict.jobFailure) {
    suite
      .testCase()
      .className('ds-analyzer.gate')
      .name('the training job ran to the end')
      .failure(clean(verdict.jobFailure), 'job');
  }
  return builder.build();
}

/** Writes the JUnit XML to `path`, creating its folder. */
export function writeJunit(path: string, verdict: GateVerdict, profilePath: string): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, junitXml(verdict, profilePath));
}

/** XML 1.0 cannot carry most control characters at all, escaped or not. */
function clean(text: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the characters XML 1.0 forbids are what it replaces
  return text.replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f\ufffe\uffff]/g, '?');
}
