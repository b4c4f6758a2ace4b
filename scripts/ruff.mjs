// The Python half of `npm run lint` and `npm run format`: Ruff (the pinned npm build
// @astral-sh/ruff-wasm-nodejs, so no Python tool to install) with ruff.toml's settings, on every .py file under
// python/, examples/, test/ and bench/. A plain .mjs, so that it runs without a build:
//   node scripts/ruff.mjs           lints and checks the formatting; exit 1 on a finding
//   node scripts/ruff.mjs --write   formats, sorts the imports (isort's fix, the one always safe), then lints
//   --root DIR                      the tree to check (it holds ruff.toml); default: this checkout
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PositionEncoding, Workspace } from '@astral-sh/ruff-wasm-nodejs';

const rootAt = process.argv.indexOf('--root');
const ROOT = rootAt > 0 ? process.argv[rootAt + 1] : fileURLToPath(new URL('..', import.meta.url));
const FOLDERS = ['python', 'examples', 'test', 'bench'];
const SKIP = new Set(['__pycache__', 'node_modules', 'dist']);
// The import order's fix: applied by --write, the other findings are fixed by hand.
const SORT_IMPORTS = 'I001';

/** Every .py file under `dir`, relative to ROOT. */
function pythonFiles(dir) {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return SKIP.has(entry.name) ? [] : pythonFiles(path);
    return entry.name.endsWith('.py') ? [path] : [];
  });
}

/** A TOML value of the subset ruff.toml uses (strings, numbers, booleans, arrays of them): JSON but for trailing commas. */
function tomlValue(text) {
  return JSON.parse(text.replace(/,\s*\]/g, ']'));
}

/** `text` less a comment: the first # outside a string. */
function uncommented(text) {
  let quoted = false;
  for (let k = 0; k < text.length; k++) {
    if (text[k] === '"' && text[k - 1] !== '\\') quoted = !quoted;
    if (text[k] === '#' && !quoted) return text.slice(0, k);
  }
  return text;
}

/** ruff.toml as Ruff's options object: [a.b] tables nest, a value may span lines until its brackets close. */
function readConfig(text) {
  const config = {};
  let table = config;
  let pending = '';
  for (const raw of text.split('\n')) {
    const line = uncommented(raw).trim();
    if (!line) continue;
    const header = /^\[([\w.-]+)\]$/.exec(line);
    if (header && !pending) {
      table = config;
      for (const key of header[1].split('.')) table = table[key] ??= {};
      continue;
    }
    pending += ` ${line}`;
    if ((pending.match(/\[/g) ?? []).length > (pending.match(/\]/g) ?? []).length) continue;
    const [, key, value] = /^\s*([\w-]+)\s*=\s*(.*)$/s.exec(pending) ?? [];
    if (key === undefined) throw new Error(`ruff.toml: cannot read "${pending.trim()}"`);
    table[key] = tomlValue(value);
    pending = '';
  }
  return config;
}

/** The offset in `text` of a 1-based row and column (UTF-16 units, as the workspace was made). */
function offsetOf(lines, { row, column }) {
  let offset = 0;
  for (let k = 0; k < row - 1; k++) offset += lines[k].length + 1;
  return offset + column - 1;
}

/** `text` with its imports sorted, one fix at a time (each fix moves the others' positions). */
function sortImports(workspace, text) {
  for (let pass = 0; pass < 20; pass++) {
    const finding = workspace.check(text).find((d) => d.code === SORT_IMPORTS && d.fix);
    if (!finding) return text;
    const lines = text.split('\n');
    const edits = finding.fix.edits
      .map((e) => ({
        from: offsetOf(lines, e.location),
        to: offsetOf(lines, e.end_location),
        content: e.content ?? '',
      }))
      .sort((a, b) => b.from - a.from);
    for (const edit of edits) text = text.slice(0, edit.from) + edit.content + text.slice(edit.to);
  }
  return text;
}

/** The findings of one file, as lines for the terminal; with `write`, the file formatted and sorted first. */
function lintFile(workspace, path, write) {
  const full = join(ROOT, path);
  const text = readFileSync(full, 'utf8');
  let checked = text;
  if (write) {
    checked = workspace.format(sortImports(workspace, workspace.format(text)));
    if (checked !== text) writeFileSync(full, checked);
  }
  const findings = workspace
    .check(checked)
    .map((d) => `${path}:${d.start_location.row}:${d.start_location.column}: ${d.code ?? 'syntax'} ${d.message}`);
  if (workspace.format(checked) !== checked) findings.push(`${path}: not formatted (npm run format rewrites it)`);
  return findings;
}

function main() {
  const write = process.argv.includes('--write');
  const workspace = new Workspace(readConfig(readFileSync(join(ROOT, 'ruff.toml'), 'utf8')), PositionEncoding.Utf16);
  const files = FOLDERS.filter((dir) => existsSync(join(ROOT, dir)))
    .flatMap(pythonFiles)
    .sort();
  const findings = files.flatMap((path) => lintFile(workspace, path, write));
  for (const line of findings) process.stdout.write(`${line}\n`);
  process.stdout.write(`ruff ${Workspace.version()}: ${files.length} Python files, ${findings.length} findings\n`);
  return findings.length === 0 ? 0 : 1;
}

process.exitCode = main();
