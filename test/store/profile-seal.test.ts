/**
 * The writer's seal (src/store/profile-seal.ts): a profile this build wrote
 * reads back without validation, and the same as validated; any other file
 * (edited, another build's seal, cut short, unsealed) is validated in full,
 * with the errors of before; on the sealed path zod is never loaded.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ExitCode, UserError } from '../../src/errors.js';
import { ProfileSchema } from '../../src/schema/profile.js';
import { loadProfile, readProfileFile } from '../../src/store/profile-files.js';
import { SCHEMA_MODULES } from '../../src/store/profile-seal.js';
import { readProfile, writeProfile } from '../../src/store/profile-store.js';

const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/profiles/', import.meta.url));
const CLI = fileURLToPath(new URL('../../../bin/ds-analyzer.js', import.meta.url));
const root = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-seal-'));
after(() => fs.rmSync(root, { recursive: true, force: true }));

const FIXTURE_NAMES = [
  'emulated-quick.json',
  'remote-capped.json',
  'remote-latency.json',
  'gate/pass.json',
  'gate/hostile.json',
  'gate/job-failed.json',
];

/** `name` written afresh by writeProfile (sealed) into the temporary folder; its path. */
function sealedCopy(name: string): string {
  const file = path.join(root, name.replace('/', '-'));
  writeProfile(file, readProfile(path.join(FIXTURES, name)));
  return file;
}

function malformedError(file: string) {
  return (error: unknown) =>
    error instanceof UserError &&
    error.exitCode === ExitCode.CorruptFile &&
    error.message.startsWith(`profile '${file}' is malformed at 'dataset.bytes'`);
}

test('a profile this build wrote reads back sealed, equal to the same file validated, without the seal', async () => {
  for (const name of FIXTURE_NAMES) {
    const file = sealedCopy(name);
    const text = fs.readFileSync(file, 'utf8');
    assert.match(text, /,\n "integrity": "sha256:[0-9a-f]{64}"\n\}\n$/, name);
    const read = readProfileFile(file);
    assert.ok('sealed' in read, `${name}: the seal matches`);
    const validated = ProfileSchema.parse(JSON.parse(text));
    delete validated.integrity;
    assert.deepEqual(read.sealed, validated, name);
    assert.equal('integrity' in read.sealed, false);
    assert.deepEqual(readProfile(file), validated, name);
    assert.deepEqual(await loadProfile(file), validated, name);
  }
});

test('writing a profile read from a sealed file seals it again, the same', () => {
  const file = sealedCopy('gate/pass.json');
  const again = path.join(root, 'again.json');
  writeProfile(again, readProfile(file));
  assert.equal(fs.readFileSync(again, 'utf8'), fs.readFileSync(file, 'utf8'));
});

test('an edited sealed profile is validated: a valid edit reads with the edit, an invalid one is the malformed error of before', async () => {
  const file = sealedCopy('emulated-quick.json');
  const text = fs.readFileSync(file, 'utf8');
  const bytes = readProfile(file).dataset.bytes;

  const valid = path.join(root, 'edited-valid.json');
  fs.writeFileSync(valid, text.replace(`"bytes": ${bytes},`, `"bytes": ${bytes + 1},`));
  assert.ok('unchecked' in readProfileFile(valid));
  assert.equal(readProfile(valid).dataset.bytes, bytes + 1);

  const invalid = path.join(root, 'edited-invalid.json');
  fs.writeFileSync(invalid, text.replace(`"bytes": ${bytes},`, `"bytes": -${bytes},`));
  assert.throws(() => readProfile(invalid), malformedError(invalid));
  await assert.rejects(loadProfile(invalid), malformedError(invalid));

  // Another build's seal (another key) on an invalid profile: validated all the same.
  const otherSeal = path.join(root, 'other-seal.json');
  fs.writeFileSync(
    otherSeal,
    text
      .replace(`"bytes": ${bytes},`, `"bytes": -${bytes},`)
      .replace(/sha256:[0-9a-f]{64}/, `sha256:${'0'.repeat(64)}`),
  );
  assert.throws(() => readProfile(otherSeal), malformedError(otherSeal));
});

test('a sealed profile cut short or re-indented is not taken as sealed', () => {
  const file = sealedCopy('emulated-quick.json');
  const text = fs.readFileSync(file, 'utf8');
  const cut = path.join(root, 'cut.json');
  fs.writeFileSync(cut, text.slice(0, 1000));
  assert.throws(
    () => readProfile(cut),
    (e: unknown) =>
      e instanceof UserError && e.exitCode === ExitCode.CorruptFile && /is not valid JSON/.test(e.message),
  );
  const reindented = path.join(root, 'reindented.json');
  fs.writeFileSync(reindented, JSON.stringify(JSON.parse(text), null, 2) + '\n');
  assert.ok('unchecked' in readProfileFile(reindented));
  assert.deepEqual(readProfile(reindented), readProfile(file));
});

test('SCHEMA_MODULES is profile.js and every module it imports, transitively', () => {
  const dir = fileURLToPath(new URL('../../src/schema/', import.meta.url));
  const seen = new Set<string>();
  const visit = (name: string) => {
    if (seen.has(name)) return;
    seen.add(name);
    const source = fs.readFileSync(path.join(dir, name), 'utf8');
    for (const match of source.matchAll(/^(?:import|export)\b[^;]*?from '\.\/([^']+)'/gm)) visit(match[1]);
  };
  visit('profile.js');
  assert.deepEqual([...seen].sort(), [...SCHEMA_MODULES].sort());
});

test('whatif and gate on a sealed profile never load zod; on an unsealed one they do', () => {
  // A resolve hook (run off the main thread) that notes every module resolved into zod.
  const log = path.join(root, 'zod-modules.log');
  const hooks = path.join(root, 'hooks.mjs');
  fs.writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function resolve(specifier, context, next) {\n` +
      `  const resolved = await next(specifier, context);\n` +
      `  if (resolved.url.includes('/node_modules/zod/')) appendFileSync(${JSON.stringify(log)}, resolved.url + '\\n');\n` +
      `  return resolved;\n}\n`,
  );
  const register = path.join(root, 'register.mjs');
  fs.writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  const zodLoadedBy = (args: string[]): boolean => {
    fs.rmSync(log, { force: true });
    execFileSync(process.execPath, ['--import', pathToFileURL(register).href, CLI, ...args], { stdio: 'pipe' });
    return fs.existsSync(log);
  };
  const sealed = sealedCopy('emulated-quick.json');
  const sealedGate = sealedCopy('gate/pass.json');
  assert.equal(zodLoadedBy(['whatif', sealed]), false, 'whatif on a sealed profile');
  assert.equal(zodLoadedBy(['gate', sealedGate, '--max-fetch-stall', '20%']), false, 'gate on a sealed profile');
  assert.equal(
    zodLoadedBy(['gate', sealedGate, '--max-fetch-stall', '20%', '--json']),
    false,
    'gate --json on a sealed profile',
  );
  assert.equal(
    zodLoadedBy(['whatif', path.join(FIXTURES, 'emulated-quick.json')]),
    true,
    'whatif on the unsealed fixture',
  );
});
