/**
 * One launch against a launch a run, side by side on the emulated job with
 * known costs (the demo's quick preset, storage throttled where permitted):
 * each part of the split as both schedules measured it and as the settings
 * imply it, what each profile cost (launches, wall time, the share spent
 * measuring), and the one launch's wall time against its goal: at most 1.5x
 * its measured iterations, plus its start-up and the time spent setting states
 * between blocks (warming, eviction).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { impliedSplit } from '../src/emulator/expected.js';
import { generateDataset } from '../src/emulator/generate-dataset.js';
import { EMULATOR_PRESETS } from '../src/emulator/presets.js';
import { throttleBlocker } from '../src/demo/run-demo.js';
import { ProfileSchema, type Profile } from '../src/schema/profile.js';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));
const EMULATOR = fileURLToPath(new URL('../src/emulator/job.js', import.meta.url));

/**
 * Goal: a one-launch profile's wall time, less its start-up and state changes, within this many times its measured
 * iterations.
 */
const WALL_GOAL = 1.5;

export async function bench(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'dsa-bench-one-launch-'));
  try {
    const preset = EMULATOR_PRESETS.quick;
    const data = join(work, 'data');
    await generateDataset(data, { files: preset.files, fileBytes: preset.fileBytes });
    const throttled = (await throttleBlocker(data, process.env)) === null;
    const job = [
      process.execPath,
      EMULATOR,
      '--data',
      data,
      '--batch-size',
      String(preset.batchSize),
      '--workers',
      String(preset.workers),
      '--compute-ms',
      String(preset.computeMs),
      '--prep-ms',
      String(preset.prepMs),
    ];
    const profileWith = async (name: string, extra: string[]): Promise<Profile | null> => {
      const out = join(work, `${name}.json`);
      const bw = throttled ? ['--storage-bw', `${preset.storageBwBytesPerSec}`] : [];
      const run = await execa(
        process.execPath,
        [CLI, 'profile', '--data', data, '--out', out, '--json', ...bw, ...extra, '--', ...job],
        { reject: false },
      );
      if (run.exitCode !== 0) {
        console.log(`${name}: profile failed (exit ${run.exitCode}): ${run.stderr.split('\n').slice(-4).join('\n')}`);
        return null;
      }
      return ProfileSchema.parse(JSON.parse(run.stdout));
    };
    // Alternated, so a drift of the machine's pace does not favour one schedule.
    const one = await profileWith('one-launch', []);
    const separate = await profileWith('separate', ['--separate-launches']);
    if (!one || !separate) return;
    const implied = impliedSplit({
      ...preset,
      cpus: one.host.cpus,
      meanFileBytes: one.dataset.meanFileBytes,
      storageBwBytesPerSec: throttled ? preset.storageBwBytesPerSec : null,
    });
    console.log(
      `emulated job, quick preset; storage ${throttled ? `throttled to ${preset.storageBwBytesPerSec / 1e6} MB/s` : 'NOT throttled: the fetch stall has no set value'}`,
    );
    console.log('part          one launch      launch a run    set by the emulator');
    const rows: [
      string,
      (p: Profile) => { mean: number; halfWidth: number | null } | null | undefined,
      number | null,
    ][] = [
      ['compute', (p) => p.analysis?.computeMs, implied.computeMs],
      ['prep stall', (p) => p.analysis?.prepStallMs, implied.prepStallMs],
      ['fetch stall', (p) => p.analysis?.fetchStallMs, implied.fetchStallMs],
    ];
    for (const [name, pick, set] of rows) {
      const show = (p: Profile) => {
        const e = pick(p);
        return e ? `${e.mean.toFixed(1)} ± ${(e.halfWidth ?? 0).toFixed(1)} ms` : '—';
      };
      console.log(
        `${name.padEnd(13)} ${show(one).padEnd(15)} ${show(separate).padEnd(15)} ${set?.toFixed(1) ?? '—'} ms`,
      );
    }
    for (const [name, p] of [
      ['one launch', one],
      ['launch a run', separate],
    ] as const) {
      const c = p.cost!;
      console.log(
        `${name.padEnd(13)} ${c.launches} launches, ${c.wallSec.toFixed(1)} s, ${c.measuredIterations} of ${c.jobIterations} iterations measured ` +
          `(${(c.measuredShare * 100).toFixed(0)}% of the time)`,
      );
    }
    const startupSec =
      one.modes.synthetic?.passes?.[0]?.firstBatch?.startupSec ?? one.modes.synthetic?.firstBatch?.startupSec ?? 0;
    const statesSec = stateChangesSec(one);
    const ratio = (one.cost!.wallSec - startupSec - statesSec) / one.cost!.measuredSec;
    console.log(
      `one launch: wall ${one.cost!.wallSec.toFixed(1)} s = start-up ${startupSec.toFixed(1)} s + state changes ${statesSec.toFixed(1)} s + ` +
        `${(one.cost!.wallSec - startupSec - statesSec).toFixed(1)} s for ${one.cost!.measuredSec.toFixed(1)} s measured: ` +
        `${ratio.toFixed(2)}x, ${(ratio / WALL_GOAL).toFixed(2)} of the ${WALL_GOAL}x goal (the overlap and storage probes included)`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

/** Time between a block's end and the next one's start in the one launch: its state being set while the job ran on. */
function stateChangesSec(profile: Profile): number {
  const runs: { startedAt: number; wallSec: number }[] = [];
  for (const mode of Object.values(profile.modes)) {
    for (const run of mode.passes ?? [mode]) runs.push({ startedAt: run.startedAt, wallSec: run.wallSec });
  }
  runs.sort((a, b) => a.startedAt - b.startedAt);
  let gaps = 0;
  for (let k = 1; k < runs.length; k++)
    gaps += Math.max(0, runs[k].startedAt - (runs[k - 1].startedAt + runs[k - 1].wallSec * 1000)) / 1000;
  return gaps;
}
