// The demo (`ds-analyzer demo`): a generated dataset of real compressed files, an emulated job profiled on it, then the
// what-if at no cache. What the demo does to the machine happens here; cli/demo-action.ts writes the report.
import { toolCacheDir } from '../paths.js';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ExitCode } from '../errors.js';
import { generateDataset, listDatasetFiles, type Dataset as GeneratedDataset } from '../emulator/generate-dataset.js';
import { EMULATOR_PRESETS, type EmulatorPreset } from '../emulator/presets.js';
import type { EmulatorSettings } from '../emulator/expected.js';
import { openDataSource, type DataSpec } from '../profile/data-sources/open-data-source.js';
import type { RemoteSpec } from '../system/network/remote-spec.js';
import { artefactsDir, newProfilePath } from '../store/profile-files.js';
import { startObjectStore } from './object-store.js';
import { DEMO_RUN, QUICK_DEMO_PRECISION, SUPERVISION } from '../profile/run-defaults.js';
import { CpuLedger } from '../system/kernel/cpu-ledger.js';
import { registryDir } from '../profile/run-registry.js';
import { runProfile, type ProfileRunHooks, type ProfileRunOutcome } from '../profile/run-profile.js';
import { MODES } from '../schema/events.js';
import { wholeDiskDevice } from '../system/kernel/block-device.js';
import { detectCgroups } from '../system/cgroups/cgroups.js';
import type { NotEnoughData } from '../whatif/model.js';
import { whatif, type WhatifResult } from '../whatif/whatif.js';

const EMULATOR = fileURLToPath(new URL('../emulator/job.js', import.meta.url));

/** Name of the demo's job in its profile and report. */
const JOB_NAME = 'emulated-demo';

/** What the demo is asked to do. */
export interface DemoInput {
  /** The quick preset (a smaller dataset and a faster job) instead of the full one. */
  quick: boolean;
  /** Folder of the generated dataset, relative to cwd; null: the user's cache folder. */
  datasetDir: string | null;
  /** Folder for the profile. */
  profilesDir: string;
  /** Whether cold storage is throttled where this machine permits. */
  throttle: boolean;
  /** Serve the dataset from an object store on loopback and profile it as remote data, capped at the metering proxy. */
  remote?: boolean;
  /** Working folder of the job. */
  cwd: string;
  /** The CLI's environment, which the job inherits (XDG_CACHE_HOME, HOME, DSA_CGROUP_PARENT read from it). */
  env: NodeJS.ProcessEnv;
}

/** What the demo tells its caller while it runs, beside the profile run's own hooks. */
export interface DemoHooks extends ProfileRunHooks {
  /** The dataset of `preset` is about to be generated, or found, in `dir`. */
  onDatasetStart?: (preset: EmulatorPreset, dir: string) => void;
  /** The dataset is ready: generated now, or reused. */
  onDatasetReady?: (dataset: GeneratedDataset) => void;
  /** Whether cold storage is throttled: reason null when it is, at `bytesPerSec`; else why not. */
  onThrottle?: (reason: string | null, bytesPerSec: number) => void;
}

/** What the demo measured and wrote. */
export interface DemoOutcome {
  /** The profile run: the profile, its path, and how the job ended. */
  run: ProfileRunOutcome;
  /** The emulated job's settings, to set beside the measured split. */
  settings: EmulatorSettings;
  /** The what-if at no cache, or why the profile cannot answer it; null when the job did not end well. */
  whatif: WhatifResult | NotEnoughData | null;
}

/** Runs the demo: dataset, profile, what-if at no cache (the command writes the report of it). */
export async function runDemo(input: DemoInput, hooks: DemoHooks): Promise<DemoOutcome> {
  // Remote data passes every byte through the proxy here, at about 1.6 ms of CPU per MB: the full preset's 80 MB/s
  // would take half a CPU of a small machine.
  const quick = input.quick || input.remote;
  const preset = quick ? EMULATOR_PRESETS.quick : EMULATOR_PRESETS.full;
  const datasetDir = await demoDataset(input, preset, hooks);

  // Remote data is capped at the metering proxy, which needs no cgroup.
  const throttleReason = !input.throttle
    ? 'disabled by --no-throttle'
    : input.remote
      ? null
      : await throttleBlocker(datasetDir, input.env);
  const storageBw = throttleReason === null ? preset.storageBwBytesPerSec : null;
  hooks.onThrottle?.(throttleReason, preset.storageBwBytesPerSec);

  const store = input.remote ? await startObjectStore(datasetDir) : null;
  const outFile = newProfilePath(input.profilesDir, JOB_NAME);
  const files: DataSpec = { kind: 'files', roots: [datasetDir], dropCaches: false };
  // One ledger for the profile's own CPU by component (system/kernel/cpu-ledger.ts).
  const ledger = new CpuLedger();
  const argv = emulatorArgv(preset, datasetDir, store?.url ?? null);
  let run: ProfileRunOutcome;
  try {
    run = await runProfile(
      {
        argv,
        cwd: input.cwd,
        env: input.env,
        jobName: JOB_NAME,
        dataRoots: store ? [] : [datasetDir],
        ...(store ? { remote: { url: `${store.url}/ (the demo's object store)`, endpoint: null } } : {}),
        modes: [...MODES],
        ...DEMO_RUN,
        ...(quick ? { precision: QUICK_DEMO_PRECISION } : {}),
        storageBwBytesPerSec: storageBw,
        dropCaches: false,
        sync: SUPERVISION.sync,
        pollMs: SUPERVISION.pollMs,
        outFile,
        dataSource: openDataSource(store ? demoRemoteData(store.url, datasetDir, outFile) : files, {
          env: input.env,
          ledger,
        }),
        ledger,
        nvidiaSmi: null,
        // The what-if below then rests on a measured overlap of reads and pre-processing.
        overlapProbe: true,
        // A first look is not refused for another profile running: both say so instead.
        registry: { dir: registryDir(input.env), allowConcurrent: true },
      },
      hooks,
    );
  } finally {
    await store?.close();
  }
  const settings: EmulatorSettings = {
    ...preset,
    cpus: run.profile.host.cpus,
    meanFileBytes: run.profile.dataset.meanFileBytes,
    storageBwBytesPerSec: storageBw,
  };
  if (run.exitCode !== ExitCode.Ok) return { run, settings, whatif: null };
  // Would the stall go if the page cache could not hold the dataset: the question the cold mode answers.
  return { run, settings, whatif: whatif(run.profile, run.path, { cacheBytes: 0 }) };
}

/** The demo's dataset, generated once into the tool's cache (or --dataset-dir) and reused after. */
async function demoDataset(input: DemoInput, preset: EmulatorPreset, hooks: DemoHooks): Promise<string> {
  const datasetDir = resolve(
    input.cwd,
    input.datasetDir ?? join(toolCacheDir(input.env), `demo-${preset.files}x${preset.fileBytes}`),
  );
  hooks.onDatasetStart?.(preset, datasetDir);
  hooks.onDatasetReady?.(
    await generateDataset(datasetDir, { files: preset.files, fileBytes: preset.fileBytes, seed: 1 }),
  );
  return datasetDir;
}

/** The emulated job's command line at the preset's settings; with a store, it fetches each sample from it. */
function emulatorArgv(preset: EmulatorPreset, datasetDir: string, storeUrl: string | null): string[] {
  const { batchSize, workers, computeMs, prepMs } = preset;
  const flags = { data: datasetDir, 'batch-size': batchSize, workers, 'compute-ms': computeMs, 'prep-ms': prepMs };
  const args = Object.entries({ ...flags, ...(storeUrl ? { 'remote-base': storeUrl } : {}) });
  return [process.execPath, EMULATOR, ...args.flatMap(([flag, value]) => [`--${flag}`, String(value)])];
}

/** The demo's dataset as remote data: each sample file an object of the store at `url`. */
function demoRemoteData(url: string, datasetDir: string, outFile: string): DataSpec {
  const origin = new URL(url);
  const urls = listDatasetFiles(datasetDir).map((path) => `${url}/${basename(path)}`);
  const spec: RemoteSpec = {
    kind: 'http',
    display: `${url}/ (the demo's object store)`,
    protocol: 'http',
    origins: [`${origin.hostname}:${origin.port}`],
    urls,
  };
  // The demo's job is not Python: its requests are counted at the proxy, which the cap needs anyway.
  const cacheDir = join(artefactsDir(outFile), 'remote-cache');
  const named = { url: spec.display, endpoint: null };
  return { kind: 'remote', remote: spec, named, jobCache: null, netMeter: 'proxy', cacheDir, proxyPort: 0 };
}

/** Why storage cannot be throttled here, or null when it can. */
export async function throttleBlocker(datasetDir: string, env: NodeJS.ProcessEnv): Promise<string | null> {
  const io = detectCgroups({ v2Parent: env.DSA_CGROUP_PARENT }).controllers.io;
  if (!io.writable) return io.reason;
  if (!(await wholeDiskDevice(datasetDir))) return 'the dataset is not on a local block device';
  return null;
}
