// Writes the generated part of docs/cli.md from the commander program, and the real outputs the docs
// show (docs/cli.md's sections, the README's `<!-- example: NAME -->` blocks) from docs/examples/
// (npm run docs:cli). Re-run it after adding or changing a command, a flag, a default, an exit code or
// what a command prints; test/cli/cli-docs.test.ts and test/cli/doc-examples.test.ts fail until it is.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cliReference, GENERATED_BEGIN, GENERATED_END, programForDocs, spliceGenerated } from '../src/cli/cli-docs.js';
import { renderExamples } from './doc-examples.js';
import { spliceExamples } from './readme-examples.js';

function update(path: string, next: string, doc: string): void {
  if (next === doc) process.stdout.write(`${path}: up to date\n`);
  else {
    writeFileSync(path, next);
    process.stdout.write(`${path}: regenerated\n`);
  }
}

const examples = await renderExamples();
// From dist/scripts/ back to the repository's docs/.
const path = fileURLToPath(new URL('../../docs/cli.md', import.meta.url));
const doc = readFileSync(path, 'utf8');
const next = spliceGenerated(doc, cliReference(await programForDocs(), examples));
if (next === null) {
  process.stderr.write(
    `gen-cli-docs: ${path} lacks the markers '${GENERATED_BEGIN}' and '${GENERATED_END}': put them back where the generated reference goes\n`,
  );
  process.exitCode = 1;
} else {
  update(path, next, doc);
}
const readmePath = fileURLToPath(new URL('../../README.md', import.meta.url));
const readme = readFileSync(readmePath, 'utf8');
update(readmePath, spliceExamples(readme, examples), readme);
