import { Command } from 'commander';
import { homedir } from 'node:os';
import { join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { generateDataset } from '../emulator/generate-dataset.js';
import { EMULATOR_PRESETS } from '../emulator/presets.js';
import type { EmulatorSettings } from '../emulator/expected.js';
import { PageCacheState } from '../profile/cache-states/page-cache-state.js';
import { newProfilePath } from '../store/profile-store.js';
import { MODES } from '../schema/events.js';
import type { Profile } from '../schema/profile.js';
import { detectCgroups } from '../system/cgroups.js';
import { wholeDiskDevice } from '../system/block-device.js';
import { formatBytes, formatRate } from '../units.js';
import { EXIT_CODES_HELP, type CommandFactory } from './program.js';
import { failedBeforeAnyIteration, runAndReport } from './run-and-report.js';
import { ExitCode } from '../errors.js';
import { modelWhatIf } from '../report/whatif-adapter.js';
import { writeReport } from '../report/write-report.js';
import { isNotEnoughData } from '../whatif/model.js';
import { whatif } from '../whatif/whatif.js';
import { renderDemoWhatif, renderNextSteps, renderSettingsCheck } from '../report/demo-terminal.js';
import type { Io } from './io.js';
import { CACHE_STATE_SETTINGS, DEMO_RUN, SUPERVISION } from '../profile/run-defaults.js';

const EMULATOR = fileURLToPath(new URL('../emulator/job.js', import.meta.url));

export const demoCommand: CommandFactory = (io, result) =>
  new Command('demo')
    .description('profile a built-in emulated training job on a generated dataset: no GPU, no Python needed')
    .option('--quick', 'a smaller dataset and faster job (about a minute)')
    .option('--dataset-dir <dir>', 'where the generated dataset lives (reused between runs)')
    .option('--profiles-dir <dir>', 'folder for the profile', 'profiles')
    .option('--reports-dir <dir>', 'folder for the HTML and Markdown report', 'reports')
    .option('--no-report', 'do not write the report')
    .option('--no-throttle', 'do not throttle storage even where permitted')
    .option('--json', 'print only the profile JSON on stdout')
    .addHelpText(
      'after',
      `
The demo generates a dataset of real compressed files (${formatBytes(EMULATOR_PRESETS.full.files * EMULATOR_PRESETS.full.fileBytes)}, cached
between runs), then profiles an emulated job that reads them in worker threads,
decompresses and pre-processes them on the CPU, and sleeps a set compute time
per batch as an accelerator would. Where the machine permits (root, cgroup
blkio/io), cold storage is throttled so the fetch stall shows, and the cold
mode runs once more with part of the dataset cached (profile --overlap). Then
it asks the what-if model what would remove the stall if the page cache could
not hold the dataset, and writes the HTML and Markdown report.

Examples:
  $ ds-analyzer demo
  $ ds-analyzer demo --quick --json > demo-profile.json
${EXIT_CODES_HELP}`,
    )
    .action(async (options: { quick?: boolean; datasetDir?: string; profilesDir: string; reportsDir: string; report: boolean; throttle: boolean; json?: boolean }) => {
      const preset = options.quick ? EMULATOR_PRESETS.quick : EMULATOR_PRESETS.full;
      const datasetDir = resolve(io.cwd, options.datasetDir ?? join(cacheHome(io), 'ds-analyzer', `demo-${preset.files}x${preset.fileBytes}`));
      const say = (text: string) => io.stderr(`${text}\n`);
      say(`demo: dataset of ${preset.files} files of ${formatBytes(preset.fileBytes)} in ${datasetDir}`);
      const dataset = await generateDataset(datasetDir, { files: preset.files, fileBytes: preset.fileBytes, seed: 1 });
      say(dataset.reused ? 'demo: reusing the generated dataset' : `demo: generated ${formatBytes(dataset.bytes)}`);

      const throttleReason = options.throttle ? await throttleBlocker(datasetDir, io.env) : 'disabled by --no-throttle';
      const storageBw = throttleReason === null ? preset.storageBwBytesPerSec : null;
      if (throttleReason) say(`demo: storage is not throttled (${throttleReason}); the cold mode reads at the disk's own speed`);
      else say(`demo: cold storage throttled to ${formatRate(preset.storageBwBytesPerSec)}`);

      const argv = [process.execPath, EMULATOR, '--data', datasetDir, '--batch-size', String(preset.batchSize), '--workers', String(preset.workers), '--compute-ms', String(preset.computeMs), '--prep-ms', String(preset.prepMs)];
      const jobName = 'emulated-demo';
      const { exitCode, outcome } = await runAndReport(
        {
          argv,
          cwd: io.cwd,
          env: io.env,
          jobName,
          dataRoots: [datasetDir],
          modes: [...MODES],
          ...DEMO_RUN,
          storageBwBytesPerSec: storageBw,
          dropCaches: false,
          sync: SUPERVISION.sync,
          pollMs: SUPERVISION.pollMs,
          outFile: newProfilePath(resolve(io.cwd, options.profilesDir), jobName),
          cacheState: new PageCacheState({ dropCaches: false, ...CACHE_STATE_SETTINGS }),
          nvidiaSmi: null,
          // The what-if below then rests on a measured overlap of reads and pre-processing.
          overlapProbe: true,
        },
        io,
        { json: Boolean(options.json) },
      );
      const settings: EmulatorSettings = { ...preset, cpus: outcome.profile.host.cpus, meanFileBytes: outcome.profile.dataset.meanFileBytes, storageBwBytesPerSec: storageBw };
      const report = options.json ? io.stderr : io.stdout;
      // Nothing measured, nothing to check the settings against: the failure is all there is to say.
      if (!failedBeforeAnyIteration(outcome)) report(`\n${renderSettingsCheck(outcome.profile, settings)}`);
      if (exitCode === ExitCode.Ok) {
        report(`\n${demoWhatif(outcome.profile, outcome.path)}`);
        const shown = (path: string) => relative(io.cwd, path) || path;
        if (options.report) {
          const written = await writeReport(outcome.profile, outcome.path, resolve(io.cwd, options.reportsDir), modelWhatIf);
          report(`\nreport: ${shown(written.html)} (self-contained) and ${shown(written.markdown)} with ${written.pngs.length} PNG charts\n`);
        }
        report(`\n${renderNextSteps(shown(outcome.path))}`);
      }
      result.exitCode = exitCode;
    });

/** The demo's what-if, or why the profile cannot answer it (e.g. an unproven cold mode's missing rate). */
function demoWhatif(profile: Profile, path: string): string {
  const outcome = whatif(profile, path, { cacheBytes: 0 });
  if (isNotEnoughData(outcome)) return `what-if: not available for this profile: ${outcome.reason}\n`;
  return renderDemoWhatif(outcome);
}

/** Why storage cannot be throttled here, or null when it can. */
async function throttleBlocker(datasetDir: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const io = detectCgroups({ v2Parent: env.DSA_CGROUP_PARENT }).controllers.io;
  if (!io.writable) return io.reason;
  if (!(await wholeDiskDevice(datasetDir))) return 'the dataset is not on a local block device';
  return null;
}

function cacheHome(io: Io): string {
  return io.env.XDG_CACHE_HOME || join(io.env.HOME || homedir(), '.cache');
}

