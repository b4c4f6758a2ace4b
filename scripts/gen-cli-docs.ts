// Writes the generated part of docs/cli.md from the commander program (npm run docs:cli).
// Re-run it after adding or changing a command, a flag, a default or an exit code;
// test/cli/cli-docs.test.ts fails until it is.
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { cliReference, GENERATED_BEGIN, GENERATED_END, programForDocs, spliceGenerated } from '../src/cli/cli-docs.js';

// From dist/scripts/ back to the repository's docs/.
const path = fileURLToPath(new URL('../../docs/cli.md', import.meta.url));
const doc = readFileSync(path, 'utf8');
const next = spliceGenerated(doc, cliReference(await programForDocs()));
if (next === null) {
  process.stderr.write(`gen-cli-docs: ${path} lacks the markers '${GENERATED_BEGIN}' and '${GENERATED_END}': put them back where the generated reference goes\n`);
  process.exitCode = 1;
} else if (next === doc) {
  process.stdout.write(`${path}: up to date\n`);
} else {
  writeFileSync(path, next);
  process.stdout.write(`${path}: regenerated\n`);
}
