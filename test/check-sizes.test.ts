/**
 * The size check of `npm run lint` (scripts/check-sizes.mjs) fails on a function over 80 lines, a file over 600
 * lines; it passes at the limits. That this checkout passes is `npm run lint`'s to say (CI runs it before the tests).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { type TestContext, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';

// Run from dist/test/: the repository root is two folders up.
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const SCRIPT = join(ROOT, 'scripts', 'check-sizes.mjs');

/** A function of exactly `lines` lines (its signature and closing brace included). */
function functionOf(name: string, lines: number): string {
  const body = Array.from({ length: lines - 2 }, (_, i) => `  const v${i} = ${i};`);
  return [`export function ${name}(): void {`, ...body, '}', ''].join('\n');
}

/**
 * Runs the check in-process (its checkSizes, as the script's main calls it) on a tree holding `files` (paths under
 * the root); its exit code and output. One TypeScript load for the file, not one a case.
 */
async function check(t: TestContext, files: Record<string, string>) {
  const root = mkdtempSync(join(tmpdir(), 'check-sizes-'));
  t.after(() => rmSync(root, { recursive: true, force: true }));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(dirname(join(root, path)), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  const { checkSizes } = (await import(pathToFileURL(SCRIPT).href)) as { checkSizes: (root: string) => number };
  const lines: string[] = [];
  const say = (text: string) => void lines.push(text);
  t.mock.method(console, 'error', say);
  t.mock.method(console, 'log', say);
  try {
    return { code: checkSizes(root), out: lines.join('\n') };
  } finally {
    t.mock.restoreAll();
  }
}

test('a function of 81 lines fails the check, named with file:line and length; 80 lines pass', async (t) => {
  const long = await check(t, { 'src/a/long.ts': `// one line first\n${functionOf('tooLong', 81)}` });
  assert.equal(long.code, 1, long.out);
  assert.match(long.out, /src\/a\/long\.ts:2 tooLong: 81 lines, over 80/);
  const fits = await check(t, { 'src/a/fits.ts': functionOf('fits', 80) });
  assert.equal(fits.code, 0, fits.out);
});

test('a method and an arrow function count as functions too', async (t) => {
  const body = functionOf('x', 81).split('\n').slice(1, -2).join('\n');
  const method = await check(t, { 'src/m.ts': `export class C {\n  run(): void {\n${body}\n  }\n}\n` });
  assert.match(method.out, /src\/m\.ts:2 run: 81 lines/);
  const arrow = await check(t, { 'src/f.ts': `export const go = (): void => {\n${body}\n};\n` });
  assert.match(arrow.out, /src\/f\.ts:1 go: 81 lines/);
});

test('a file of 601 lines fails; 600 lines pass', async (t) => {
  const lines = (n: number) => Array.from({ length: n }, (_, i) => `export const c${i} = ${i};\n`).join('');
  const big = await check(t, { 'src/big.ts': lines(601) });
  assert.equal(big.code, 1, big.out);
  assert.match(big.out, /src\/big\.ts \(file\): 601 lines, over 600/);
  assert.equal((await check(t, { 'src/big.ts': lines(600) })).code, 0);
});
