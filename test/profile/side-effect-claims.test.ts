// The README's and the docs' sentences about what a profile does to the job and to the machine (checkpoints,
// trackers, the page cache, what is left behind), each held against the code that does it: a test a claim. A
// sentence reworded away from its claim fails here, and so does a behaviour that drifts from its sentence.
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import {
  closeSync,
  fsyncSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { runProfile } from '../../src/profile/run-profile.js';
import { PROFILE_FLAG_DEFAULTS } from '../../src/profile/run-defaults.js';
import { PROFILE_RUN_TEXT } from '../../src/profile/run-text.js';
import { PageCacheState } from '../../src/profile/cache-states/page-cache-state.js';
import { listDataset } from '../../src/system/dataset/dataset.js';
import { pageCacheSupport, residency, warm } from '../../src/system/page-cache/page-cache.js';
import { artefactsDir, newProfilePath } from '../../src/store/profile-files.js';
import { MODES, type Mode } from '../../src/schema/events.js';
import { fakeModeRunner, fakeProfileInput } from './fake-mode-runner.js';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const read = (path: string): string => readFileSync(join(ROOT, path), 'utf8').replace(/\s+/g, ' ');
const README = read('README.md');
const SIDE_EFFECTS = read('docs/side-effects.md');
const PYTORCH = read('docs/pytorch.md');
/** Fails with the claim's words, not the whole document, when `doc` no longer says it. */
function says(doc: string, claim: RegExp): void {
  assert.ok(claim.test(doc), `the docs no longer say ${claim}`);
}
const DOCS = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

const work = mkdtempSync(join(tmpdir(), 'dsa-claims-'));
after(() => rmSync(work, { recursive: true, force: true }));

/** The job's environment in each run of a profile (the fake runner starts nothing), and the folder left after it. */
async function profileEnvs(name: string, keepOutputs: boolean) {
  const dir = join(work, name);
  mkdirSync(join(dir, 'data'), { recursive: true });
  const fake = fakeModeRunner({
    waitMs: { synthetic: 0, cached: 5, cold: 20 },
    stepMs: { synthetic: 50, cached: 50, cold: 50 },
    driftPerSec: 0,
    noise: 0.02,
    startupSec: 1,
    seed: 5,
  });
  const envs: { mode: Mode; env: NodeJS.ProcessEnv }[] = [];
  const input = fakeProfileInput(dir, name, async (run) => {
    envs.push({ mode: run.mode, env: run.env });
    return fake.run(run);
  });
  await runProfile({ ...input, keepOutputs }, { onSignal: () => () => {} });
  return { envs, input, left: readdirSync(dir).sort() };
}

/** What the Python hook does with a job's environment: whether each save is diverted, and where TensorBoard logs. */
function hook(env: NodeJS.ProcessEnv, mode: Mode): { diverting: boolean; scratch: string; tensorboard: string | null } {
  const script = `
import json, sys, types
sys.path.insert(0, ${JSON.stringify(join(ROOT, 'python'))})
from ds_analyzer import _auto, _checkpoint
logged = []
class SummaryWriter:
    def __init__(self, log_dir=None):
        logged.append(log_dir)
module = types.SimpleNamespace(SummaryWriter=SummaryWriter)
_auto.on_tensorboard_loaded(module)
module.SummaryWriter("runs/exp1")
print(json.dumps({"diverting": _checkpoint.diverting(${JSON.stringify(mode)}),
                  "scratch": _checkpoint.diversions.scratch_beside("/ck/model.pt"),
                  "tensorboard": None if logged[0] == "runs/exp1" else logged[0]}))`;
  const out = spawnSync('python3', ['-c', script], { env: { PATH: process.env.PATH, ...env }, encoding: 'utf8' });
  assert.equal(out.status, 0, out.stderr);
  return JSON.parse(out.stdout);
}

test('checkpoints: to scratch files in every mode unless --keep-outputs; the synthetic mode always', async () => {
  assert.match(
    README,
    /\*\*Checkpoints\*\*: in every mode each save to a path goes to a hidden scratch file beside its target, removed when the job exits/,
  );
  assert.match(
    README,
    /`--keep-outputs` lets the cached and cold modes save to the target; the synthetic mode \([^)]*\) never does/,
  );
  says(SIDE_EFFECTS, /by default it writes nothing of yours, in every mode/);
  assert.match(
    SIDE_EFFECTS,
    /`--keep-outputs` leaves all of it to the job: its checkpoints are saved for real [^.]*\(the synthetic mode's saves still go to scratch files/,
  );
  says(SIDE_EFFECTS, /a hidden scratch file beside it \(`\.<name>\.dsa-scratch-<pid>`/);
  says(
    PYTORCH,
    /In every mode \(unless `--keep-outputs`, `DSA_KEEP_OUTPUTS=1`; the synthetic mode always, its model trains on one batch\)/,
  );
  for (const keepOutputs of [false, true]) {
    const { envs } = await profileEnvs(keepOutputs ? 'kept' : 'diverted', keepOutputs);
    assert.deepEqual([...new Set(envs.map((e) => e.mode))].sort(), [...MODES].sort());
    for (const { mode, env } of [...new Map(envs.map((e) => [e.mode, e])).values()]) {
      const seen = hook({ ...env, DSA_MODE: mode }, mode);
      assert.equal(seen.diverting, mode === 'synthetic' || !keepOutputs, `${mode}, keepOutputs ${keepOutputs}`);
      assert.match(seen.scratch, /^\/ck\/\.model\.pt\.dsa-scratch-\d+$/);
    }
  }
});

test("profile --continue: the run's own saves are real, a synthetic block's go to scratch", () => {
  assert.match(
    README,
    /the cached and cold blocks and the rest of the run save and log as they would; a synthetic block's saves go to scratch/,
  );
  assert.match(PROFILE_RUN_TEXT.continueOutputs, /a synthetic block's saves go to scratch files/);
  // run-profile.ts gives a --continue launch the --keep-outputs variables, and block-result.ts adds DSA_CONTINUE.
  const env = { DSA_KEEP_OUTPUTS: '1', DSA_CONTINUE: '1' };
  for (const mode of MODES) assert.equal(hook({ ...env, DSA_MODE: mode }, mode).diverting, mode === 'synthetic', mode);
});

test("trackers: W&B disabled, MLflow and TensorBoard under the profile's folder, unless --keep-outputs", async () => {
  assert.match(
    README,
    /\*\*Trackers\*\*: W&B is disabled \(`WANDB_MODE=disabled`\); MLflow and TensorBoard log under the profile's folder, not to your server\. `--keep-outputs` leaves them to the job/,
  );
  says(SIDE_EFFECTS, /`MLFLOW_TRACKING_URI=file:\/\/<profile>\.d\/scratch\/mlruns`/);
  says(SIDE_EFFECTS, /`SummaryWriter` writes under `<profile>\.d\/scratch\/tensorboard`/);
  const diverted = await profileEnvs('trackers', false);
  const scratch = join(artefactsDir(diverted.input.outFile), 'scratch');
  for (const { mode, env } of diverted.envs) {
    assert.equal(env.WANDB_MODE, 'disabled');
    assert.equal(env.MLFLOW_TRACKING_URI, `file://${scratch}/mlruns`);
    assert.equal(hook({ ...env, DSA_MODE: mode }, mode).tensorboard, join(scratch, 'tensorboard', 'exp1'));
  }
  const kept = await profileEnvs('trackers-kept', true);
  for (const { mode, env } of kept.envs) {
    assert.equal(env.WANDB_MODE, undefined);
    assert.equal(env.MLFLOW_TRACKING_URI, undefined);
    assert.equal(hook({ ...env, DSA_MODE: mode }, mode).tensorboard, null);
  }
});

test('left behind: the profile and its .d folder, named <job>-<time>', async () => {
  assert.match(
    README,
    /\*\*Left behind\*\*: `profiles\/<job>-<time>\.json` and the job's logs in `profiles\/<job>-<time>\.d\/`/,
  );
  assert.match(
    newProfilePath(PROFILE_FLAG_DEFAULTS.profilesDir, 'train', new Date(0)),
    /^profiles\/train-\d{8}T\d{6}\.json$/,
  );
  const { left } = await profileEnvs('left', false);
  // The fake runner writes no logs, so the .d folder may be absent; nothing else may be there.
  assert.deepEqual(
    left.filter((f) => f !== 'left.d'),
    ['data', 'left.json'],
  );
});

test("the page cache: only the dataset's files are evicted before a cold block", async (t) => {
  assert.match(
    README,
    /the dataset's files \(only those; all with `--drop-caches`\) are evicted from the page cache before each cold block/,
  );
  says(SIDE_EFFECTS, /the machine's other cached files are kept unless `--drop-caches`/);
  if (!pageCacheSupport().evict) return t.skip('no posix_fadvise here (libc could not be bound)');
  const data = join(work, 'cache', 'data');
  mkdirSync(data, { recursive: true });
  const write = (path: string): string => {
    const fd = openSync(path, 'w');
    writeSync(fd, Buffer.alloc(1 << 20, 7));
    fsyncSync(fd);
    closeSync(fd);
    return path;
  };
  for (const name of ['a.bin', 'b.bin']) write(join(data, name));
  const bystander = [{ path: write(join(work, 'cache', 'bystander.bin')) }];
  const dataset = await listDataset([data]);
  await warm([...dataset.files, ...bystander], { concurrency: 1 });
  const state = new PageCacheState({ dropCaches: false, coldKeeperIntervalMs: 1000, warmConcurrency: 1 });
  const prepared = await state.prepare('cold', dataset);
  try {
    assert.equal(prepared.residentBytesBefore, 0);
    assert.ok((await residency(bystander)).residentBytes > 0, 'a file outside the dataset stays in the page cache');
  } finally {
    await prepared.finish();
  }
});

test('how long: the defaults the README names', () => {
  const d = PROFILE_FLAG_DEFAULTS;
  const said = `\`--precision\` (${d.precision}), after \`--min-iterations\` (${d.minIterations}), at the latest at \`--max-iterations\` (${d.maxIterations}) or \`--timeout\` (${d.timeout} a mode)`;
  assert.ok(README.includes(said), `README: ${said}`);
});

// The sentence the issue found stale ("the cached and cold modes save for real", said of every profile): a sentence
// that says saves are real must say when (--keep-outputs, --continue, DSA_KEEP_OUTPUTS) or what could not be diverted.
test('no doc says saves are real without saying when', () => {
  const real = /(sav(e|es|ed)|written|writes?) (checkpoints )?(for real|to (the|its) target)/i;
  const when =
    /keep-outputs|KEEP_OUTPUTS|--continue|open file|open-file|custom.writer|cannot be diverted|could not be diverted/i;
  const loose: string[] = [];
  for (const doc of DOCS)
    for (const sentence of read(doc).split(/(?<=[.:;])\s+(?=[-A-Z`*(|#])/))
      if (real.test(sentence) && !when.test(sentence)) loose.push(`${doc}: ${sentence.slice(0, 200)}`);
  assert.deepEqual(loose, []);
});
