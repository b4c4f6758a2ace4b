// docs/cli.md and --help must not drift apart: every flag of every command,
// with its default, and every exit code a command can return. The program is
// read live, so a new command or flag fails here until `npm run docs:cli`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import {
  cliReference,
  defaultText,
  GENERATED_BEGIN,
  GENERATED_END,
  programForDocs,
  visibleOptions,
} from '../../src/cli/cli-docs.js';
import { run } from '../../src/cli/main.js';
import { exitCodesOf } from '../../src/cli/program.js';
import { EXIT_CODES, ExitCode } from '../../src/errors.js';
import { ENV, NODE_RANK_ENV } from '../../src/schema/events.js';
import { fakeIo } from './fake-io.js';
import { renderExamples } from '../../scripts/doc-examples.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const DOC = readFileSync(join(ROOT, 'docs', 'cli.md'), 'utf8');
const program = await programForDocs();
const commands = program.commands;
const FIX = 'run `npm run docs:cli` to bring docs/cli.md up to date';

/** The docs' section of one command, up to the next heading. */
function docSection(name: string): string {
  const start = DOC.indexOf(`\n### \`ds-analyzer ${name}\`\n`);
  assert.ok(start >= 0, `docs/cli.md has no section for '${name}': ${FIX}`);
  const end = DOC.indexOf('\n#', start + 1);
  return DOC.slice(start, end < 0 ? undefined : end);
}

/** The codes an 'Exit codes' block lists (lines '  N    meaning'), and how many such blocks the text has. */
function helpExitCodes(help: string): { codes: number[]; blocks: number } {
  const blocks = help.split(/\nExit codes[^\n]*:\n/);
  const codes = blocks.length < 2 ? [] : [...blocks[1].matchAll(/^ {2}(\d+) +\S/gm)].map((m) => Number(m[1]));
  return { codes, blocks: blocks.length - 1 };
}

async function helpOf(name: string): Promise<string> {
  const io = fakeIo(tmpdir());
  assert.equal(await run([name, '--help'], io), ExitCode.Ok);
  return io.out;
}

const declared = (command: Command): number[] => (exitCodesOf(command) ?? []).map((use) => use.code);

test('every command declares the exit codes it can return (withExitCodes), among them 0, 2 and 9', () => {
  assert.ok(commands.length >= 8, 'the program has its commands');
  for (const command of commands) {
    const codes = declared(command);
    assert.ok(
      codes.length > 0,
      `'${command.name()}' declares no exit codes: wrap it in withExitCodes (src/cli/program.ts)`,
    );
    for (const code of [ExitCode.Ok, ExitCode.Usage, ExitCode.Internal])
      assert.ok(codes.includes(code), `'${command.name()}' can return ${code}`);
    for (const code of codes)
      assert.ok(EXIT_CODES.includes(code), `'${command.name()}': ${code} is in the ExitCode enum`);
  }
});

test("each command's --help lists exactly the codes it declares, in one table", async () => {
  for (const command of commands) {
    const { codes, blocks } = helpExitCodes(await helpOf(command.name()));
    assert.equal(blocks, 1, `'${command.name()} --help' has one exit-code table`);
    assert.deepEqual(codes, declared(command), `'${command.name()} --help' exit codes`);
  }
  // A budget fails only in gate, and in profile with --gate.
  for (const command of commands.filter((c) => !['gate', 'profile'].includes(c.name()))) {
    assert.ok(!declared(command).includes(ExitCode.GateFailed), `'${command.name()}' does not return 1`);
  }
});

test('the top-level --help lists every exit code', async () => {
  const io = fakeIo(tmpdir());
  assert.equal(await run(['--help'], io), ExitCode.Ok);
  assert.deepEqual(helpExitCodes(io.out).codes, [...EXIT_CODES]);
});

test('docs/cli.md names every flag of every command with the same default', () => {
  for (const command of commands) {
    const section = docSection(command.name());
    for (const option of visibleOptions(command)) {
      const row = section.split('\n').find((line) => line.startsWith(`| \`${option.flags}\` |`));
      assert.ok(row, `docs/cli.md: '${command.name()} ${option.flags}' is missing: ${FIX}`);
      assert.ok(
        row.startsWith(`| \`${option.flags}\` | ${defaultText(option)} |`),
        `docs/cli.md: '${command.name()} ${option.flags}' default is not ${defaultText(option)}: ${FIX}`,
      );
    }
    const rows = section.split('\n').filter((line) => /^\| `-/.test(line));
    assert.equal(
      rows.length,
      visibleOptions(command).length,
      `docs/cli.md: '${command.name()}' lists flags it does not have: ${FIX}`,
    );
  }
});

test("docs/cli.md lists each command's exit codes, and the whole table says which commands return each", () => {
  for (const command of commands) {
    const section = docSection(command.name());
    const codes = [...section.matchAll(/^\| (\d+) \| /gm)].map((m) => Number(m[1]));
    assert.deepEqual(codes, declared(command), `docs/cli.md: exit codes of '${command.name()}': ${FIX}`);
  }
  const table = DOC.slice(DOC.indexOf('\n## Exit codes\n'), DOC.indexOf('\n## Commands\n'));
  for (const code of EXIT_CODES) {
    const row = table.split('\n').find((line) => line.startsWith(`| ${code} |`));
    assert.ok(row, `docs/cli.md's exit-code table has ${code}`);
    const by = commands.filter((c) => declared(c).includes(code));
    if (by.length < commands.length)
      for (const c of by)
        assert.ok(row.includes(`\`${c.name()}\``), `docs/cli.md: ${code} is returned by '${c.name()}': ${FIX}`);
  }
});

test('the generated part of docs/cli.md, real outputs included, is what `npm run docs:cli` writes now', async () => {
  const begin = DOC.indexOf(GENERATED_BEGIN);
  const end = DOC.indexOf(GENERATED_END);
  assert.ok(begin >= 0 && end > begin, 'docs/cli.md keeps its generated markers');
  assert.equal(DOC.slice(begin, end + GENERATED_END.length), cliReference(program, await renderExamples()), FIX);
});

// What the commands return on a few wrong inputs is among the codes their help lists.
test('the codes commands return on wrong input are among those their --help lists', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'dsa-cli-docs-'));
  const missing = join(dir, 'missing.json');
  const corrupt = join(dir, 'corrupt.json');
  writeFileSync(corrupt, '{ not json');
  const probes: Record<string, string[][]> = {
    whatif: [[missing], [corrupt], [corrupt, '--cache', '64X']],
    report: [[missing], [corrupt]],
    gate: [
      [missing, '--max-fetch-stall', '20%'],
      [corrupt, '--max-fetch-stall', '20%'],
      [corrupt, '--max-fetch-stall', 'lots'],
      [corrupt],
    ],
    compare: [
      [missing, corrupt],
      [corrupt, corrupt],
    ],
    validate: [[missing, '--cpus', '1'], [corrupt, '--cpus', '1'], [corrupt, '--cpus', 'x'], [corrupt]],
    doctor: [['--require', 'gpu']],
    profile: [
      ['--data', join(dir, 'nope'), '--', 'true'],
      ['--data', dir, '--precision', 'tight', '--', 'true'],
      ['--', 'true'],
    ],
  };
  for (const command of commands) {
    for (const args of [['--frobnicate'], ...(probes[command.name()] ?? [])]) {
      const io = fakeIo(dir);
      const code = await run([command.name(), ...args], io);
      assert.ok(
        declared(command).includes(code),
        `'${command.name()} ${args.join(' ')}' returned ${code}, which its --help does not list (${io.err.trim()})`,
      );
    }
  }
});

/** Every file under `dir` whose name ends with one of `exts`. */
function sourceFiles(dir: string, exts: string[]): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return name === '__pycache__' ? [] : sourceFiles(path, exts);
    return exts.some((ext) => name.endsWith(ext)) ? [path] : [];
  });
}

test('docs/cli.md names every environment variable the tool reads or sets for the job', () => {
  const section = DOC.slice(DOC.indexOf('\n## Environment variables\n'));
  assert.ok(section.length > 100, 'docs/cli.md has its environment variables section');
  const names = new Set<string>([...Object.values(ENV), ...NODE_RANK_ENV]);
  const patterns = [
    /\bDSA_[A-Z0-9_]+/g,
    /\b(?:process\.env|env)\.([A-Z][A-Z0-9_]+)\b/g,
    /\benv(?:\.get)?[[(]\s*['"]([A-Z][A-Z0-9_]+)['"]/g,
    /_int_env\(env, "([A-Z_]+)"/g,
  ];
  for (const file of [...sourceFiles(join(ROOT, 'src'), ['.ts']), ...sourceFiles(join(ROOT, 'python'), ['.py'])]) {
    const text = readFileSync(file, 'utf8');
    for (const pattern of patterns) for (const m of text.matchAll(pattern)) names.add(m[1] ?? m[0]);
  }
  assert.ok(
    names.has('DSA_CGROUP_PARENT') && names.has('DSA_NVIDIA_SMI') && names.has('GITHUB_STEP_SUMMARY'),
    'the scan found the variables',
  );
  const missing = [...names].filter((name) => !section.includes(`\`${name}\``));
  assert.deepEqual(missing, [], 'variables not named in the table of docs/cli.md');
});
