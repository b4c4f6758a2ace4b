// What `ds-analyzer doctor` prints: the capability table, what each missing capability costs and how to fix it, and
// with --data the dataset's file systems and their limits.
import { missingRequired, type Diagnosis } from '../system/probes/diagnose.js';
import type { CapabilityName } from '../system/probes/capability-text.js';
import { doctorOutput, type DoctorOutput } from '../schema/doctor-output.js';
import { table, wrapLine } from './format.js';

/** The diagnosis as a terminal text. */
export function renderDoctor(d: Diagnosis): string {
  let text =
    table([
      ['capability', 'ok', 'found'],
      ...d.capabilities.map((r) => [r.name, r.available ? 'yes' : 'NO', r.detail]),
    ]) + '\n';
  const missing = d.capabilities.filter((r) => !r.available);
  if (missing.length) text += '\nWhat is missing, and what it costs:\n';
  for (const r of missing)
    text += [...wrapLine('-', `${r.name}: ${r.impact}`, '  '), ...wrapLine('  fix:', r.fix, '    ')].join('\n') + '\n';
  const p = d.python;
  text += `\nThe job's ${p.command}: ${p.path ?? 'not found on PATH'}${p.sudoUser ? ` (under sudo for ${p.sudoUser})` : ''}\n`;
  if (p.warning) text += wrapLine('- warning:', p.warning, '  ').join('\n') + '\n';
  if (d.dataset) {
    text += `\n${table([['dataset', 'file system', 'source', 'mounted at'], ...d.dataset.map((f) => [f.root, f.type, f.source, f.mountPoint])])}\n`;
    const limits = [
      ...d.unresolved.map((dir) => `--data ${dir}: cannot be resolved to a mounted file system (does it exist?)`),
      ...d.fileSystemWarnings,
    ];
    text += limits.length
      ? limits.map((w) => wrapLine('-', w, '  ').join('\n') + '\n').join('')
      : 'The cached and cold modes can be proven on these file systems.\n';
  }
  return text;
}

/** doctor --json: everything found, and which of the capabilities asked for with --require are missing. */
export function doctorJson(d: Diagnosis, required: readonly CapabilityName[]): DoctorOutput {
  return doctorOutput({
    capabilities: d.capabilities,
    required: [...required],
    missingRequired: missingRequired(d, required).map((c) => c.name),
    dataset: d.dataset,
    unresolved: d.unresolved,
    fileSystemWarnings: d.fileSystemWarnings,
    python: d.python,
  });
}
