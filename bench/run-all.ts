/**
 * Runs every benchmark in bench/ in one process, one after another, and prints
 * their ratios. Benchmarks are never timed assertions: the numbers are for people.
 */
import { readdirSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { join } from 'node:path';

const dir = fileURLToPath(new URL('.', import.meta.url));
const only = process.argv.slice(2);
for (const name of readdirSync(dir)
  .filter((n) => n.endsWith('.bench.js'))
  .sort()) {
  if (only.length && !only.some((o) => name.includes(o))) continue;
  console.log(`\n=== ${name.replace(/\.bench\.js$/, '')} ===`);
  const module = (await import(pathToFileURL(join(dir, name)).href)) as { bench: () => Promise<void> };
  await module.bench();
}
