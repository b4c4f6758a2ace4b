import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';
import { ExitCode, UserError } from '../errors.js';
import { PROFILE_TEXT } from './profile-text.js';
import { CpuLedger } from '../system/kernel/cpu-ledger.js';
import { openDataSource } from '../profile/data-sources/open-data-source.js';
import type { NetMeter } from '../profile/data-sources/remote-objects.js';
import { parseRemoteSpec, redactUrl } from '../system/network/remote-spec.js';
import { readProfile } from '../store/profile-store.js';
import { artefactsDir, newProfilePath } from '../store/profile-files.js';
import { fileSink, redactingSink } from '../store/artifact-sink.js';
import type { ProfileRunInput } from '../profile/run-profile.js';
import { nodePlan } from '../profile/nodes/node-plan.js';
import { DEFAULT_PASSES, SUPERVISION } from '../profile/run-defaults.js';
import { MODES, ModeSchema, type Mode } from '../schema/events.js';
import { parseCountList, parseDurationSec, parseFraction, parsePort, parsePositiveInt, parseRate } from '../units.js';
import { runAndReport } from './run-and-report.js';
import { prepareGate, withLaterEpochs } from '../gate/options.js';
import { runGate } from './run-gate.js';
import type { Io } from './io.js';
import { chooseRunAs, runAsNote, type RunAs } from '../profile/run-as.js';
import { withPython } from '../profile/python-flag.js';
import { registryDir } from '../profile/run-registry.js';
import { handOver } from '../system/kernel/hand-over.js';
import { REMOTE_COPY_FOLDER } from '../store/leftover-files.js';

/** Options of `profile` as commander hands them over (strings, unparsed). */
export interface RawProfileOptions {
  data?: string[];
  remote?: string;
  endpoint?: string;
  proxyPort?: string;
  jobCache?: string;
  netMeter?: string;
  modes: string;
  precision: string;
  minIterations: string;
  maxIterations: string;
  timeout: string;
  firstIterationTimeout: string;
  hangTimeout: string;
  storageBw?: string;
  dropCaches?: boolean;
  sync: boolean;
  out?: string;
  profilesDir: string;
  name?: string;
  json?: boolean;
  stopGrace: string;
  nvidiaSmi: string;
  cpus?: string;
  workers?: string;
  overlap?: boolean;
  keepReclaim?: boolean;
  allowConcurrent?: boolean;
  redact?: boolean;
  singlePass?: boolean;
  separateLaunches?: boolean;
  keepOutputs?: boolean;
  continue?: boolean;
  gate?: string;
  baseline?: string;
  junit?: string;
  nnodes?: string;
  coordinator?: string;
  nodesTimeout: string;
  asUser?: string;
  python?: string;
}

/**
 * What `profile` does once commander has parsed its flags: runs the job in each mode, writes and prints the profile,
 * then its gate.
 */
export async function profileAction(command: string[], raw: RawProfileOptions, io: Io): Promise<number> {
  const input = parseProfileOptions(command, raw, io);
  // A bad gate config fails before anything runs, not after minutes of profiling.
  const gate = raw.gate
    ? await prepareGate({ config: raw.gate, baseline: raw.baseline, junit: raw.junit }, io.cwd)
    : null;
  if (!gate && (raw.baseline || raw.junit)) {
    throw new UserError(PROFILE_TEXT.gateFlagsWithoutGate, ExitCode.Usage);
  }
  const redact = raw.redact ? { home: io.env.HOME ?? null, cwd: io.cwd } : undefined;
  if (input.runAs) io.stderr(`note: ${runAsNote(input.runAs, raw.asUser)}\n`);
  const handBack = input.runAs
    ? outputsOf(input, input.runAs, raw.junit ? resolve(io.cwd, raw.junit) : null)
    : () => {};
  try {
    const { exitCode, outcome } = await runAndReport(
      redact ? { ...input, sink: redactingSink(fileSink, redact) } : input,
      io,
      { json: Boolean(raw.json), redact },
    );
    // With --json stdout holds only the profile, so the verdict goes to stderr.
    if (!gate || exitCode !== ExitCode.Ok) return exitCode;
    const baseline = gate.baselinePath ? await withLaterEpochs(readProfile(gate.baselinePath), gate.epochs) : null;
    return await runGate(outcome.profile, outcome.path, gate, raw.json ? { ...io, stdout: io.stderr } : io, baseline);
  } finally {
    try {
      handBack();
    } catch (error) {
      // The run's own exit code stands; the user is told which files stayed root's.
      io.stderr(`ds-analyzer: warning: ${error instanceof Error ? error.message : String(error)}\n`);
    }
  }
}

/**
 * What the run writes, to hand to the user the job ran as once it ends (failed or interrupted too): the profile, the
 * job's folder beside it, the JUnit file, and the profiles folder when this run made it. Called before the run, which
 * is when a folder it makes does not exist yet.
 */
function outputsOf(input: ProfileRunInput, user: RunAs, junit: string | null): () => void {
  const profiles = [input.outFile, ...(input.nodes ? [input.nodes.mergedOutFile] : [])];
  const newFolders = [...new Set(profiles.map((file) => dirname(file)))].filter((dir) => !existsSync(dir));
  return () => {
    handOver([...newFolders, ...profiles, ...(junit ? [junit] : [])], user, { recursive: false });
    handOver(profiles.map(artefactsDir), user, { recursive: true });
  };
}

/** Files that name a job better than the launcher or interpreter that runs them. */
const SCRIPT = /\.(py|sh|js|mjs|cjs|ts|rb|pl|jl|lua)$/i;

/**
 * The job's name: its script (train.py in 'torchrun --nproc_per_node 2 train.py', where the first non-option argument
 * is the option's value 2), else the first argument that is not an option, else the command.
 */
export function jobNameOf(command: string[]): string {
  // Options and their inline values (--config=cfg.py) are not the script.
  const operand = (arg: string) => !arg.startsWith('-') && !arg.includes('=');
  const script = command.find((arg) => operand(arg) && SCRIPT.test(arg));
  const firstOperand = command.find((arg, k) => k > 0 && operand(arg));
  return basename(script ?? firstOperand ?? command[0]) || 'job';
}

/** Turns commander's strings into a validated run input; every error names its flag. */
export function parseProfileOptions(command: string[], raw: RawProfileOptions, io: Io): ProfileRunInput {
  refuseMissing(command, raw);
  const netMeter = parseNetMeter(raw.netMeter);
  const modes = parseModes(raw.modes);
  const jobName = raw.name ?? jobNameOf(command);
  const { plan, mergedOutFile, outFile } = placesOf(command, raw, io, jobName);
  const jobCache = raw.jobCache
    ? checkJobCache(resolve(io.cwd, raw.jobCache), [io.cwd, outFile, io.env.HOME ?? '/'])
    : null;
  // --python first: setpriv is looked up on the PATH it leaves.
  const env = raw.python !== undefined ? withPython(raw.python, io.env, io.cwd) : io.env;
  const runAs = chooseRunAs({ flag: raw.asUser, env });
  const measure = measureOf(raw);
  // One ledger for the profile: the sampler, the event reader, the meter and the cache states charge their CPU to it.
  const ledger = new CpuLedger();
  return {
    argv: command,
    cwd: io.cwd,
    env,
    ...(runAs ? { runAs } : {}),
    jobName,
    modes,
    ...measure,
    outFile,
    ...dataOf(raw, io, { outFile, jobCache, netMeter, ledger }),
    ledger,
    nvidiaSmi: raw.nvidiaSmi,
    cpuSweep: raw.cpus ? parseCountList(raw.cpus, '--cpus', 1) : [],
    workersSweep: raw.workers ? parseCountList(raw.workers, '--workers') : [],
    overlapProbe: Boolean(raw.overlap),
    pauseReclaim: !raw.keepReclaim,
    registry: { dir: registryDir(io.env), allowConcurrent: Boolean(raw.allowConcurrent) },
    passes: raw.singlePass ? 1 : DEFAULT_PASSES,
    separateLaunches: Boolean(raw.separateLaunches),
    keepOutputs: Boolean(raw.keepOutputs),
    ...(raw.continue ? { continueRun: true } : {}),
    ...(plan
      ? {
          nodes: {
            plan,
            timing: { arriveTimeoutSec: parseDurationSec(raw.nodesTimeout, '--nodes-timeout') },
            mergedOutFile,
          },
        }
      : {}),
  };
}

/** The usage errors of a command line that lacks what every profile needs, or names flags that do not go together. */
function refuseMissing(command: string[], raw: RawProfileOptions): void {
  if (command.length === 0) throw new UserError(PROFILE_TEXT.noCommand, ExitCode.Usage);
  if (raw.remote && raw.data && raw.data.length > 0) throw new UserError(PROFILE_TEXT.dataTwice, ExitCode.Usage);
  if (!raw.remote && (!raw.data || raw.data.length === 0)) throw new UserError(PROFILE_TEXT.noData, ExitCode.Usage);
  if (!raw.remote && (raw.endpoint || raw.proxyPort || raw.jobCache || raw.netMeter)) {
    throw new UserError(PROFILE_TEXT.remoteOnlyFlags, ExitCode.Usage);
  }
}

/**
 * The nodes the job spans (null: one), and where the profile goes: the merged profile where it was asked for, and on
 * several nodes each node's own beside it (on a shared folder they must not collide).
 */
function placesOf(command: string[], raw: RawProfileOptions, io: Io, jobName: string) {
  const plan = nodePlan(command, io.env, {
    ...(raw.nnodes !== undefined ? { nnodes: parsePositiveInt(raw.nnodes, '--nnodes') } : {}),
    ...(raw.coordinator !== undefined ? { coordinator: raw.coordinator } : {}),
  });
  if (plan && raw.overlap) throw new UserError(PROFILE_TEXT.overlapOneNode(plan.nodes), ExitCode.Usage);
  if (raw.continue) refuseBesideContinue(raw, plan !== null);
  const mergedOutFile = raw.out ? resolve(io.cwd, raw.out) : newProfilePath(resolve(io.cwd, raw.profilesDir), jobName);
  return { plan, mergedOutFile, outFile: plan ? nodeProfilePath(mergedOutFile, hostname()) : mergedOutFile };
}

/** How each mode is measured and how its job is supervised. */
function measureOf(raw: RawProfileOptions) {
  return {
    precision: parseFraction(raw.precision, '--precision'),
    minIterations: parsePositiveInt(raw.minIterations, '--min-iterations'),
    maxIterations: parsePositiveInt(raw.maxIterations, '--max-iterations'),
    timeoutSec: parseDurationSec(raw.timeout, '--timeout'),
    firstIterationTimeoutSec: parseDurationSec(raw.firstIterationTimeout, '--first-iteration-timeout'),
    hangTimeoutSec: parseDurationSec(raw.hangTimeout, '--hang-timeout'),
    stopGraceSec: parseDurationSec(raw.stopGrace, '--stop-grace'),
    killGraceSec: SUPERVISION.killGraceSec,
    storageBwBytesPerSec: raw.storageBw ? parseRate(raw.storageBw, '--storage-bw') : null,
    dropCaches: Boolean(raw.dropCaches),
    sync: raw.sync,
    pollMs: SUPERVISION.pollMs,
  };
}

/** The data the job reads, and the source that lists it, sets each mode's state and meters its reads. */
function dataOf(
  raw: RawProfileOptions,
  io: Io,
  {
    outFile,
    jobCache,
    netMeter,
    ledger,
  }: { outFile: string; jobCache: string | null; netMeter: NetMeter; ledger: CpuLedger },
): Pick<ProfileRunInput, 'dataRoots' | 'remote' | 'dataSource'> {
  const dataRoots = (raw.data ?? []).map((dir) => resolve(io.cwd, dir));
  const context = { env: io.env, ledger, say: (line: string) => io.stderr(`note: ${line}\n`) };
  if (!raw.remote) {
    return {
      dataRoots,
      dataSource: openDataSource({ kind: 'files', roots: dataRoots, dropCaches: Boolean(raw.dropCaches) }, context),
    };
  }
  // Remote data as the profile names it: without credentials or query.
  const named = { url: redactUrl(raw.remote), endpoint: raw.endpoint ? redactUrl(raw.endpoint) : null };
  const remote = parseRemoteSpec(raw.remote, raw.endpoint, io.env);
  const cacheDir = join(artefactsDir(outFile), REMOTE_COPY_FOLDER);
  const proxyPort = raw.proxyPort ? parsePort(raw.proxyPort, '--proxy-port') : 0;
  return {
    dataRoots,
    remote: { ...named, jobCache, netMeter },
    dataSource: openDataSource({ kind: 'remote', remote, named, jobCache, netMeter, cacheDir, proxyPort }, context),
  };
}

/**
 * --continue rides one launch of the real run: no flag that needs launches of its own (a sweep, the overlap probe,
 * separate launches, several nodes) nor one that would stay in its way to its end (a storage throttle).
 */
function refuseBesideContinue(raw: RawProfileOptions, multiNode: boolean): void {
  const flags: [string, unknown][] = [
    ['--separate-launches', raw.separateLaunches],
    ['--cpus', raw.cpus],
    ['--workers', raw.workers],
    ['--overlap', raw.overlap],
    ['--storage-bw', raw.storageBw],
    ['--nnodes', multiNode],
  ];
  const found = flags.find(([, value]) => Boolean(value));
  if (found) throw new UserError(PROFILE_TEXT.continueWith(found[0]), ExitCode.Usage);
}

/** A node's own profile beside the merged one: run.json on host gpu-b is run.gpu-b.json. */
export function nodeProfilePath(mergedOutFile: string, host: string): string {
  const safe = host.replace(/[^A-Za-z0-9._-]/g, '_') || 'node';
  return mergedOutFile.endsWith('.json')
    ? `${mergedOutFile.slice(0, -'.json'.length)}.${safe}.json`
    : `${mergedOutFile}.${safe}.json`;
}

/**
 * The --job-cache folder, whose files the cold mode deletes: refused where a slip of the path would delete what matters
 * (the root, the home folder, the working folder, the profile's own folder, or a folder holding any of them).
 */
function checkJobCache(dir: string, guarded: readonly string[]): string {
  const holds = (path: string) => path === dir || path.startsWith(dir === '/' ? '/' : `${dir}/`);
  const hit = guarded.find((path) => holds(resolve(path)));
  if (dir === '/' || hit !== undefined) {
    throw new UserError(PROFILE_TEXT.jobCacheHolds(dir, hit ?? '/'), ExitCode.BadValue);
  }
  return dir;
}

/** --net-meter: where the job's requests are counted and the cached mode answered. */
function parseNetMeter(text: string | undefined): NetMeter {
  if (text === undefined || text === 'client' || text === 'proxy') return text ?? 'client';
  throw new UserError(PROFILE_TEXT.notANetMeter(text), ExitCode.BadValue);
}

function parseModes(text: string): Mode[] {
  const modes = text
    .split(',')
    .map((m) => m.trim())
    .filter(Boolean);
  for (const mode of modes) {
    if (!ModeSchema.safeParse(mode).success) {
      throw new UserError(PROFILE_TEXT.unknownMode(mode, MODES), ExitCode.BadValue);
    }
  }
  if (modes.length === 0 || new Set(modes).size !== modes.length) {
    throw new UserError(PROFILE_TEXT.modesTwice(MODES), ExitCode.BadValue);
  }
  return modes as Mode[];
}
