import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, rmdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import { detectCgroups } from '../../src/system/cgroups/cgroups.js';
import { evict } from '../../src/system/page-cache/page-cache.js';
import { listDataset } from '../../src/system/dataset/dataset.js';
import { CLI, PYTHON, sleep, torchMissing, writeClassFolders } from './helpers.js';

/**
 * A dataset larger than the memory the job has (issue 10, item 2): the CLI and
 * an unmodified torchvision DatasetFolder script run inside a cgroup v1 memory
 * group of 512 MiB with 560 MiB of files. The cached mode must run on a
 * resident random subset that the hook made the script sample from, and be
 * proven; the cold mode on the whole dataset must be proven too (item 3).
 *
 * The group is larger than the dataset's share alone would need because the
 * CLI (~30 MiB) and a PyTorch process (~135 MiB of its own) are charged to it.
 * Needs root, the cgroup v1 memory controller and /usr/bin/python3 with torch
 * and torchvision; skips with the reason otherwise.
 */
const SCRIPT = fileURLToPath(new URL('../../../test/fixtures/datasetfolder-train.py', import.meta.url));
const LIMIT_BYTES = 512 * 2 ** 20;
const FILE_BYTES = 256 * 1024;
const CLASSES = 8;
const PER_CLASS = 280; // 2240 files, 560 MiB

const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-memcg-'));
const data = join(work, 'data');
const group = `/sys/fs/cgroup/memory/dsa-e2e-${process.pid}`;
let skipReason: string | null = null;

async function unavailable(): Promise<string | null> {
  if (process.geteuid?.() !== 0) return 'needs root to create a memory cgroup';
  const memory = detectCgroups().controllers.memory;
  if (memory.version !== 'v1' || !memory.writable || memory.parentDir !== '/sys/fs/cgroup/memory') {
    return `needs a writable cgroup v1 memory controller at /sys/fs/cgroup/memory (${memory.reason})`;
  }
  return torchMissing();
}

before(async () => {
  skipReason = await unavailable();
  if (skipReason) return;
  writeClassFolders(data, { classes: CLASSES, perClass: PER_CLASS, fileBytes: FILE_BYTES });
  // Written by this process, the files sit in the page cache charged to its group: out, so the CLI warms them inside
  // the small one.
  await evict((await listDataset([data])).files, { sync: true });
  mkdirSync(group);
  writeFileSync(join(group, 'memory.limit_in_bytes'), String(LIMIT_BYTES));
});

after(async () => {
  for (let attempt = 0; attempt < 20 && existsSync(group); attempt++) {
    try {
      rmdirSync(group);
    } catch {
      await sleep(250);
    }
  }
  rmSync(work, { recursive: true, force: true });
});

test('a DatasetFolder script inside a memory cgroup smaller than its dataset: the cached mode is proven on a resident subset', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const out = join(work, 'profile.json');
  const cli = [
    'profile',
    '--data',
    data,
    '--modes',
    'cached,cold',
    '--single-pass',
    '--precision',
    '10%',
    '--min-iterations',
    '150',
    '--max-iterations',
    '200',
    '--out',
    out,
  ];
  // The shell joins the group, then becomes the CLI: the CLI and the job it starts are both charged to it.
  const result = await execa(
    'sh',
    [
      '-c',
      `echo $$ > ${group}/cgroup.procs && exec "$@"`,
      'sh',
      process.execPath,
      CLI,
      ...cli,
      '--',
      PYTHON,
      SCRIPT,
      data,
      '--batch',
      '32',
    ],
    {
      cwd: work,
      reject: false,
      all: true,
      timeout: 300_000,
    },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  assert.doesNotMatch(result.all, /^\s+at .+\(.+:\d+:\d+\)$/m, 'no stack trace');
  const profile = readProfile(out);
  assert.equal(profile.dataset.fitsInMemory, false);
  assert.ok(
    profile.dataset.memoryBudgetBytes! < LIMIT_BYTES,
    `budget ${profile.dataset.memoryBudgetBytes} from the group's limit`,
  );

  const cached = profile.modes.cached!;
  assert.equal(cached.state.proven, true, cached.state.reason);
  const subset = cached.subset!;
  assert.ok(subset, 'the cached mode ran on a subset');
  assert.equal(subset.reason, 'does-not-fit');
  assert.match(subset.how, new RegExp(`memory cgroup ${group}`));
  assert.equal(subset.jobSamples, subset.files, 'the hook kept exactly the subset');
  assert.equal(subset.datasetFiles, CLASSES * PER_CLASS);
  assert.ok(subset.files > 100 && subset.bytes < LIMIT_BYTES / 2, `${subset.files} files, ${subset.bytes} bytes`);
  assert.equal(cached.state.datasetBytes, subset.bytes, 'residency is proven for the subset');
  const listed = readFileSync(join(work, 'profile.d', 'cached', 'subset.txt'), 'utf8')
    .trim()
    .split('\n');
  assert.equal(listed.length, subset.files);

  const cold = profile.modes.cold!;
  assert.equal(cold.state.proven, true, cold.state.reason);
  assert.ok(cold.state.readFraction! >= 0.9);
  assert.equal(cold.subset, undefined, 'the cold mode reads the whole dataset');
  t.diagnostic(
    `subset ${subset.files}/${subset.datasetFiles} files (${(subset.bytes / 2 ** 20).toFixed(0)} MiB of ${(subset.datasetBytes / 2 ** 20).toFixed(0)} MiB), ` +
      `budget ${(profile.dataset.memoryBudgetBytes! / 2 ** 20).toFixed(0)} MiB; cached ${cached.state.reason}; cold ${cold.state.reason}; ` +
      `group peak ${(Number(readFileSync(join(group, 'memory.max_usage_in_bytes'), 'utf8')) / 2 ** 20).toFixed(0)} MiB`,
  );
});
