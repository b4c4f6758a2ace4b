/**
 * Accuracy of the differential split on the emulated job with known costs:
 * runs `ds-analyzer demo --quick --json` (throttled storage where permitted)
 * and prints each part of the split as measured, as implied by the settings,
 * and the relative error (target: within 10%), plus the state proofs.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { impliedSplit } from '../src/emulator/expected.js';
import { EMULATOR_PRESETS } from '../src/emulator/presets.js';
import { ProfileSchema } from '../src/schema/profile.js';

const CLI = fileURLToPath(new URL('../../bin/ds-analyzer.js', import.meta.url));

export async function bench(): Promise<void> {
  const work = mkdtempSync(join(tmpdir(), 'dsa-bench-accuracy-'));
  try {
    const run = await execa(
      process.execPath,
      [CLI, 'demo', '--quick', '--json', '--dataset-dir', join(work, 'data'), '--profiles-dir', join(work, 'profiles')],
      { reject: false },
    );
    if (run.exitCode !== 0) {
      console.log(`demo failed (exit ${run.exitCode}): ${run.stderr.split('\n').slice(-5).join('\n')}`);
      return;
    }
    const profile = ProfileSchema.parse(JSON.parse(run.stdout));
    const preset = EMULATOR_PRESETS.quick;
    const throttled = profile.options.storageBwBytesPerSec;
    const implied = impliedSplit({
      ...preset,
      cpus: profile.host.cpus,
      meanFileBytes: profile.dataset.meanFileBytes,
      storageBwBytesPerSec: throttled,
    });
    const a = profile.analysis!;
    const rows: [string, number | undefined, number | null][] = [
      ['compute', a.computeMs?.mean, implied.computeMs],
      ['prep stall', a.prepStallMs?.mean, implied.prepStallMs],
      ['fetch stall', a.fetchStallMs?.mean, implied.fetchStallMs],
    ];
    console.log(
      `emulated job, quick preset; storage ${throttled ? `throttled to ${throttled / 1e6} MB/s` : 'NOT throttled (no permission): fetch stall has no set value'}`,
    );
    for (const [name, measured, expected] of rows) {
      const error =
        measured !== undefined && expected ? `${(((measured - expected) / expected) * 100).toFixed(1)}%` : 'n/a';
      console.log(
        `${name.padEnd(12)} measured ${measured?.toFixed(2) ?? '—'} ms  set ${expected?.toFixed(2) ?? '—'} ms  error ${error}`,
      );
    }
    for (const mode of ['cached', 'cold'] as const) {
      const state = profile.modes[mode]!.state;
      console.log(
        `${mode.padEnd(12)} read from storage / consumed = ${state.readFraction?.toFixed(3)}  (${state.proven ? 'proven' : 'UNPROVEN'})`,
      );
    }
    const keeper = profile.modes.cold!.state.keeper;
    if (keeper)
      console.log(
        `cold keeper  ${keeper.mechanism}: ${(keeper.cpuShare * 100).toFixed(2)}% of one CPU (${keeper.cpuSec.toFixed(3)} CPU-s)`,
      );
    // What the schedule costs: the profile's wall time against the time the job spent in measured iterations.
    const modes = Object.values(profile.modes);
    const measuredSec = modes.reduce(
      (sum, m) => sum + (m.summary ? (m.summary.measuredIterations * m.summary.iterMs.mean) / 1000 : 0),
      0,
    );
    const modeWallSec = modes.reduce((sum, m) => sum + m.wallSec, 0);
    const runs = modes.reduce((sum, m) => sum + (m.passes?.length ?? 1), 0);
    console.log(
      `wall time   ${run.durationMs / 1000 > 0 ? (run.durationMs / 1000).toFixed(1) : '?'} s for the whole demo, ${modeWallSec.toFixed(1)} s in ${runs} runs of the three modes, ` +
        `${measuredSec.toFixed(1)} s of measured iterations: modes' wall / measured = ${(modeWallSec / measuredSec).toFixed(2)}x`,
    );
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
