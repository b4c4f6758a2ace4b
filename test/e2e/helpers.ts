import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

// A run registry of this file's own (run-registry.ts): the suite runs behaviour files side by side
// (scripts/test-plan.ts), and their real profiles would otherwise refuse each other. The CLI runs a
// test starts inherit it; a test that needs another sets its own. Removed when the file's process exits.
const registry = mkdtempSync(join(tmpdir(), 'dsa-e2e-runs-'));
process.env.DSA_RUN_REGISTRY = registry;
process.on('exit', () => rmSync(registry, { recursive: true, force: true }));

/** The CLI launcher, as a user runs it. */
export const CLI = fileURLToPath(new URL('../../../bin/ds-analyzer.js', import.meta.url));
/** The compiled emulated job. */
export const EMULATOR = fileURLToPath(new URL('../../src/emulator/job.js', import.meta.url));
/** Source-tree fixtures (not compiled). */
export const FIXTURES = fileURLToPath(new URL('../../../test/fixtures/', import.meta.url));

/** Starts the real CLI in a child process; never rejects. */
export function startCli(
  args: string[],
  options: { cwd: string; env?: Record<string, string> },
): ResultPromise<{ reject: false; all: true }> {
  return execa(process.execPath, [CLI, ...args], {
    cwd: options.cwd,
    env: options.env,
    reject: false,
    all: true,
    timeout: 600_000,
  });
}

/** Resolves when the CLI's output shows `pattern`; rejects, with the output, when the CLI ends first. */
export function seen(cli: ReturnType<typeof startCli>, pattern: RegExp): Promise<void> {
  let text = '';
  return new Promise((resolve, reject) => {
    cli.all!.on('data', (chunk: Buffer) => {
      text += chunk.toString();
      if (pattern.test(text)) resolve();
    });
    void cli.then(() => reject(new Error(`the CLI ended before ${pattern}:\n${text}`)));
  });
}

/** Fails when `output` holds a stack trace. */
export function noStackTrace(output: string): void {
  assert.doesNotMatch(output, /^\s+at .+\(.+:\d+:\d+\)$/m, `no stack trace in:\n${output}`);
}

/** Pids of processes whose command line mentions `marker` (left-over jobs). */
export function processesMentioning(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

/** Emulator command line for tests. */
export function emulatorArgv(dataDir: string, extra: string[] = []): string[] {
  return [process.execPath, EMULATOR, '--data', dataDir, ...extra];
}

/** Whether storage can be throttled here (root with a writable blkio/io controller). */
export async function canThrottle(): Promise<string | null> {
  const { detectCgroups } = await import('../../src/system/cgroups/cgroups.js');
  const io = detectCgroups().controllers.io;
  return io.writable ? null : io.reason;
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * An ImageFolder-style dataset of random bytes: `classes` folders c0, c1, ...
 * of `perClass` files sNNNN.bin of `fileBytes` each (what the DatasetFolder
 * fixture script reads).
 */
export function writeClassFolders(
  root: string,
  layout: { classes: number; perClass: number; fileBytes: number },
): void {
  for (let c = 0; c < layout.classes; c++) {
    const dir = join(root, `c${c}`);
    mkdirSync(dir, { recursive: true });
    for (let i = 0; i < layout.perClass; i++)
      writeFileSync(join(dir, `s${String(i).padStart(4, '0')}.bin`), randomBytes(layout.fileBytes));
  }
}

/** Debian's Python, where python3-torch installs torch. */
export const PYTHON = '/usr/bin/python3';

/** Why the torch tests cannot run here (no torch or torchvision for PYTHON), or null when they can. */
export async function torchMissing(): Promise<string | null> {
  const probe = await execa(PYTHON, ['-c', 'import torch, torchvision'], { reject: false });
  return probe.exitCode === 0
    ? null
    : `needs ${PYTHON} with torch and torchvision (apt-get install python3-torch python3-torchvision)`;
}
