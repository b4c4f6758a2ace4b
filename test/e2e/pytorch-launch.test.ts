import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { execa } from 'execa';
import { readProfile } from '../../src/store/profile-store.js';
import { ExitCode } from '../../src/errors.js';
import {
  FIXTURES,
  noStackTrace,
  processesMentioning,
  PYTHON,
  startCli,
  torchMissing,
  writeClassFolders,
} from './helpers.js';

/**
 * PyTorch scripts whose launch is what is checked, not a timing: one that never creates a DataLoader, one whose
 * epoch limit ends it in its first block, and two ranks under torchrun (test/fixtures/ddp_train.py, whose data is in memory). Side by side with other files
 * (scripts/test-plan.ts); --data is a small folder of files.
 */
const work = mkdtempSync(join(tmpdir(), 'dsa-e2e-pytorch-launch-'));
const data = join(work, 'data');

let skipReason: string | null = null;
before(async () => {
  skipReason = await torchMissing();
  if (skipReason) return;
  writeClassFolders(data, { classes: 2, perClass: 8, fileBytes: 16 * 1024 });
});

test('a script that never creates a DataLoader: stopped after the first-iteration timeout with a way out', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const script = join(work, 'no_loader.py');
  writeFileSync(script, 'import time\nwhile True:\n    time.sleep(0.1)\n');
  const out = join(work, 'no-loader.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--modes',
      'cached',
      '--first-iteration-timeout',
      '4s',
      '--',
      PYTHON,
      script,
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
  assert.match(result.all, /no iterations were seen within 4 s \(--first-iteration-timeout\)/);
  assert.match(result.all, /from ds_analyzer import iterate/);
  assert.match(result.all, /docs\/pytorch\.md/);
  noStackTrace(result.all);
  assert.equal(readProfile(out).modes.cached?.stopReason, 'no-iterations');
  assert.deepEqual(processesMentioning(script), []);
});

test('torchrun with two ranks on CPU (gloo): per-rank figures and the slowest rank sets the pace', async (t) => {
  if (skipReason) return t.skip(skipReason);
  // test/fixtures/ddp_train.py: two ranks, rank 1 preparing its batches more slowly.
  const script = join(FIXTURES, 'ddp_train.py');
  const out = join(work, 'ddp.json');
  const result = await startCli(
    [
      'profile',
      '--data',
      data,
      '--out',
      out,
      '--modes',
      'synthetic,cached',
      '--precision',
      '10%',
      '--min-iterations',
      '30',
      '--max-iterations',
      '200',
      '--',
      '/usr/bin/torchrun',
      '--standalone',
      '--nproc_per_node',
      '2',
      script,
    ],
    { cwd: work },
  );
  assert.equal(result.exitCode, ExitCode.Ok, result.all);
  const cached = readProfile(out).modes.cached!;
  assert.deepEqual(cached.ranks.map((r) => r.rank).sort(), [0, 1]);
  assert.ok(cached.paceRank !== null);
  // Rates are labelled per rank, and the ranks' total is shown beside them.
  assert.match(result.stdout, /samples\/s per rank/);
  assert.match(result.stdout, /all ranks together, samples\/s: synthetic [\d.]+ · cached [\d.]+/);
  assert.equal(readProfile(out).jobName, 'ddp_train.py', 'named after the script, not the value of --nproc_per_node');
  // One launch: both ranks switched from synthetic to cached together, at the same iteration, agreed over gloo.
  const profile = readProfile(out);
  assert.equal(profile.cost?.schedule, 'one-launch', profile.cost?.scheduleReason);
  assert.equal(profile.cost?.launches, 1);
  const eventsDir = join(dirname(cached.logs.stdout), 'events');
  // A rank's events; beside them each loader process's prep-stage totals (stages-PID.jsonl).
  const events = readdirSync(eventsDir).filter((name) => name.startsWith('events-'));
  assert.equal(events.length, 2, events.join(', '));
  const switches = events.map((name) =>
    readFileSync(join(eventsDir, name), 'utf8')
      .split('\n')
      .filter((line) => line.includes('"type":"block"'))
      .map((line) => {
        const { block, i } = JSON.parse(line) as { block: number; i: number };
        return `${block}@${i}`;
      }),
  );
  // synthetic, cached, cached-2 (two blocks back to back), synthetic-2: three switches.
  assert.equal(switches[0].length, 3, `three switches: ${switches[0].join(', ')}`);
  assert.deepEqual(switches[0], switches[1], 'the ranks switch at the same iteration');
  assert.deepEqual(processesMentioning(script), []);
});

test('an epoch limit that ends the job in its first block: one launch, the true reason and an inconclusive verdict', async (t) => {
  if (skipReason) return t.skip(skipReason);
  const images = join(work, 'images');
  const examples = join(FIXTURES, '..', '..', 'examples', 'pytorch');
  await execa(PYTHON, [join(examples, 'make_dataset.py'), images, '--classes', '2', '--train-per-class', '8']);
  const out = join(work, 'epochs-1.json');
  const script = join(examples, 'train.py');
  const job = [PYTHON, script, '-a', 'squeezenet1_1', '-b', '4', '-j', '0', '--epochs', '1', '--image-size', '32'];
  const result = await startCli(['profile', '--data', join(images, 'train'), '--out', out, '--', ...job, images], {
    cwd: work,
  });
  assert.equal(result.exitCode, ExitCode.JobFailed, result.all);
  const profile = readProfile(out);
  assert.equal(profile.cost?.launches, 1, 'launching it again would end the same way');
  assert.equal(profile.modes.synthetic?.stalled?.cause, 'ended');
  assert.match(
    profile.analysis!.verdict.text,
    /^inconclusive: the job ended by itself \(exit 0\) 4 iterations into the synthetic block/,
  );
  assert.doesNotMatch(result.all, /did not offer to switch modes/);
  noStackTrace(result.all);
});
