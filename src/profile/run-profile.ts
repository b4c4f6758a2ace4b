import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { localNode } from '../analysis/merge-nodes.js';
import { ExitCode } from '../errors.js';
import type { ModeResult } from '../schema/profile.js';
import { artefactsDir } from '../store/profile-files.js';
import { handOver } from '../system/kernel/hand-over.js';
import { startGpuSampler } from '../system/probes/gpu.js';
import { hostFacts } from '../system/probes/host.js';
import type { Throttle } from './data-sources/throttle.js';
import { assertRidable, jobExitCode, trainOn } from './continue-run.js';
import { Interrupts } from './interrupts.js';
import { iterationsRun, launchPlan, profileCost, type ScheduleRan } from './launch-plan.js';
import { outputsEnv, outputsNote } from './job-outputs.js';
import { newProfile } from './new-profile.js';
import { NodeRuns, type ScheduleOptions } from './nodes/node-runs.js';
import { assertRunnable } from './preflight.js';
import { ProfileBook } from './profile-book.js';
import type { ProfileRunHooks, ProfileRunInput, ProfileRunOutcome } from './profile-input.js';
import { overlapStep, storageProbeStep } from './profile-probes.js';
import { booksOf, lostOrThrow, runBudget, runPlan, type ProfileSteps, type RunsEnd } from './profile-schedule.js';
import { DEFAULT_PASSES } from './run-defaults.js';
import { runLaunch } from './run-launch.js';
import { runMode } from './run-mode.js';
import { networkRate, stoppedBy } from './run-outcome.js';
import { RunRegistration } from './run-registry.js';
import { jobRunner, launchRunner, pauseReclaim, sharedRunSettings, startThrottle } from './run-setup.js';
import { PROFILE_RUN_TEXT } from './run-text.js';

export { planRuns, type PlannedRun } from './launch-plan.js';
export type { ProfileRunHooks, ProfileRunInput, ProfileRunOutcome } from './profile-input.js';
export { runBudget } from './profile-schedule.js';

/**
 * Runs the requested modes (as blocks of one launch where it can: launch-plan.ts) and writes the profile after each
 * launch and run, so a crash or an interrupt leaves every measured mode saved.
 */
export async function runProfile(input: ProfileRunInput, hooks: ProfileRunHooks): Promise<ProfileRunOutcome> {
  assertRunnable(input);
  // Entered once the data is listed (profileModes); released whatever ended the run.
  const registration = input.registry
    ? new RunRegistration(input.registry.dir, input.outFile, input.registry.allowConcurrent)
    : null;
  // Paused from before the walk to the end, so the whole profile sees one state of the machine.
  const reclaim = pauseReclaim(input.pauseReclaim !== false, 'profile', input.env);
  try {
    // --continue: once the blocks are measured, the machine is the job's again (reclaim back on, the registry freed).
    const letGo = () => {
      reclaim.restore();
      registration?.release();
    };
    return await profileModes(input, hooks, reclaim.warnings, registration, letGo);
  } finally {
    reclaim.restore();
    registration?.release();
    // The source's proxy and cache (remote data) outlive no profile, whatever ended it.
    await input.dataSource.close().catch(() => undefined);
  }
}

/** The steps' shared parts before the job's runners are made. */
type Rig = Omit<ProfileSteps, 'runOnce' | 'launchOnce'>;

async function profileModes(
  input: ProfileRunInput,
  hooks: ProfileRunHooks,
  reclaimWarnings: string[],
  registration: RunRegistration | null,
  letGo: () => void,
): Promise<ProfileRunOutcome> {
  const { book, dataset, passes, warn } = await openBook(input, hooks, reclaimWarnings, registration);
  const host = book.profile.host;
  // Every node arrives before anything is throttled or run: a node that never comes costs no run.
  const nodes = input.nodes
    ? await NodeRuns.open(input.nodes, book, { ...scheduleOf(input), passes }, input.sink)
    : null;
  const interrupts = new Interrupts(hooks.onSignal);
  // A download before a mode stops at the user's interrupt, and says how it comes on.
  input.dataSource.bindRun?.({
    signal: interrupts.signal,
    ...(hooks.onDownload ? { onDownload: hooks.onDownload } : {}),
    rateBytesPerSec: () => networkRate(book.profile),
  });
  const throttle = await startThrottle(
    input.dataSource,
    dataset,
    input.storageBwBytesPerSec,
    `${process.pid}`,
    input.env,
  ).catch((error: unknown) => {
    nodes?.link.abort(errorText(error));
    throw error;
  });
  const gpu =
    input.nvidiaSmi && host.gpus.length > 0
      ? await startGpuSampler({ command: input.nvidiaSmi, intervalMs: input.pollMs })
      : null;
  if (nodes) {
    // The job spans the nodes: where one is gone, this node's ranks wait on it in vain.
    nodes.link.onLost((message) => {
      warn(message);
      interrupts.stop();
    });
    interrupts.onInterrupt(() => nodes.link.abort(`node ${host.hostname} was interrupted`));
  }
  const rig: Rig = { input, hooks, book, nodes, dataset, interrupts, warn };
  const steps: ProfileSteps = { ...rig, ...runners(rig, throttle, gpu ?? undefined) };
  // --continue: the GPU sampler's nvidia-smi stops too once the blocks are measured: nothing of the profiler stays.
  const release = () => {
    letGo();
    void gpu?.stop();
  };
  try {
    return await measure(steps, passes, release);
  } catch (error) {
    // The other nodes hear why at once, not when their wait for this one times out.
    nodes?.link.abort(errorText(error));
    const stopped = stoppedBy(error, interrupts.interrupted);
    if (!stopped) throw error;
    // The modes measured before stay saved, as partial.
    for (const written of booksOf(book, nodes)) written.save();
    return { ...shown(steps), failureTail: null, ...stopped };
  } finally {
    nodes?.link.abort(`node ${host.hostname} ended its profile`);
    interrupts.dispose();
    await gpu?.stop();
    await throttle?.remove();
  }
}

/**
 * The profile's book before any run: the data listed, this profile registered (another running is refused here), the
 * host's facts, and what keeps a mode from being proven said before anything runs.
 */
async function openBook(
  input: ProfileRunInput,
  hooks: ProfileRunHooks,
  reclaimWarnings: string[],
  registration: RunRegistration | null,
): Promise<Pick<Rig, 'book' | 'dataset' | 'warn'> & { passes: number }> {
  const dataset = await input.dataSource.list();
  registration?.enter();
  const warnings: string[] = [];
  const warn = (message: string) => {
    warnings.push(message);
    hooks.onWarning?.(message);
  };
  for (const warning of reclaimWarnings) warn(warning);
  for (const warning of input.dataSource.warnings(dataset, input.modes)) warn(warning);
  const passes = Math.max(1, Math.round(input.passes ?? DEFAULT_PASSES));
  if (passes === 1 && input.modes.length > 1) warn(PROFILE_RUN_TEXT.singlePass);
  const host = await hostFacts({ nvidiaSmi: input.nvidiaSmi ?? undefined });
  // Each save first names the profiles that ran beside this one (where --allow-concurrent let one).
  const book = new ProfileBook(newProfile(input, passes, host, dataset, warnings), input.outFile, input.sink, () =>
    registration?.noteNeighbours(warnings),
  );
  return { book, dataset, passes, warn };
}

/** The job's input with the outputs' environment (checkpoints and trackers to scratch, said) and the nodes'. */
function jobOutputs({ input, hooks, book, nodes }: Rig): ProfileRunInput {
  const scratchDir = join(artefactsDir(input.outFile), 'scratch');
  if (input.runAs) {
    // The job, run as the user, makes its trackers' folders in here.
    mkdirSync(scratchDir, { recursive: true });
    handOver([artefactsDir(input.outFile), scratchDir], input.runAs, { recursive: false });
  }
  // --continue: the run's own saves are real; a synthetic block's still go to scratch (the hook diverts them).
  const ownOutputs = input.keepOutputs === true || input.continueRun === true;
  book.profile.outputs = input.continueRun ? PROFILE_RUN_TEXT.continueOutputs : outputsNote(ownOutputs, scratchDir);
  hooks.onNote?.(book.profile.outputs);
  return { ...input, env: { ...input.env, ...outputsEnv(ownOutputs, scratchDir), ...(nodes ? nodes.jobEnv : {}) } };
}

/** The two ways to start the job, for a run and for a launch's blocks; a cold run or launch runs under the throttle. */
function runners(
  rig: Rig,
  throttle: Throttle | null,
  gpu: Parameters<typeof sharedRunSettings>[2],
): Pick<ProfileSteps, 'runOnce' | 'launchOnce'> {
  const { input, hooks, book, nodes, dataset, interrupts } = rig;
  const settings = sharedRunSettings(jobOutputs(rig), dataset, gpu);
  const start = jobRunner(settings, input.modeRunner ?? runMode, interrupts);
  const launch = launchRunner(settings, input.launchRunner ?? runLaunch, interrupts);
  const wrapArgv = (cold: boolean) => (argv: string[]) => (cold && throttle ? throttle.wrap(argv) : argv);
  const shared = (label: string) => ({
    modeDir: join(artefactsDir(input.outFile), label),
    // Every node has set its (first block's) state before any rank starts; a launch's later blocks wait in the job
    // (DSA_NODES).
    ...(nodes ? { beforeJobStart: () => nodes.barrier(label) } : {}),
    ...(input.ledger ? { ledger: input.ledger } : {}),
    onProgress: hooks.onProgress,
    onJobStarted: hooks.onJobStarted,
  });
  // The job ran here: this node's rank is the one its ranks reported (merge-nodes.ts).
  const ranHere = (results: ModeResult[]) => {
    const ranks = results.find((result) => result.ranks.length > 0)?.ranks;
    if (ranks) book.profile.nodes = [localNode(book.profile.host, ranks)];
  };
  return {
    runOnce: async ({ mode, label, argv, cacheState, budgetShare = 1, numWorkers }) => {
      hooks.onModeStart?.(label);
      const result = await start({
        mode,
        argv,
        ...shared(label),
        ...runBudget(input, budgetShare),
        wrapArgv: wrapArgv(mode === 'cold'),
        cacheState,
        ...(numWorkers !== undefined ? { numWorkers } : {}),
      });
      ranHere([result]);
      return result;
    },
    launchOnce: async (blocks, label) => {
      hooks.onModeStart?.(blocks[0].label);
      const outcome = await launch({
        argv: input.argv,
        ...shared(label),
        wrapArgv: wrapArgv(blocks.some((b) => b.mode === 'cold')),
        blocks,
        onBlockStart: (block) => hooks.onModeStart?.(block.label, true),
        ...(input.continueRun ? { continueRun: true } : {}),
      });
      ranHere(outcome.results);
      return outcome;
    },
  };
}

/** The profile measured: its plan, the probes, its cost, the nodes finished, every profile saved; --continue after. */
async function measure(steps: ProfileSteps, passes: number, release: () => void): Promise<ProfileRunOutcome> {
  const { input, hooks, book, nodes, dataset, interrupts } = steps;
  const startedAt = Date.now();
  const fakesSingleRuns = input.modeRunner !== undefined && input.launchRunner === undefined;
  const plan = launchPlan({ ...input, fakesSingleRuns }, dataset, passes);
  if (input.continueRun) assertRidable(plan);
  const end = await runPlan(steps, plan);
  // The run --continue rides is the user's from here: its signals go to it as themselves, and no probe reads the
  // dataset beside it (the what-if keeps the cold blocks' read rate as a lower bound).
  if (end.continuing) interrupts.passOn(end.continuing.job);
  let exitCode = end.exitCode;
  let nodeLost = end.nodeLost;
  const goesOn = () => exitCode === ExitCode.Ok && !interrupts.interrupted;
  const probes = !input.continueRun;
  if (input.overlapProbe && probes && goesOn()) await overlapStep(steps);
  if (probes && input.storageProbe !== false && goesOn()) await storageProbeStep(steps);
  recordCost(steps, end, startedAt);
  if (nodes && goesOn()) {
    nodeLost = await nodes.finish(book.profile.storageProbe ?? null).then(() => undefined, lostOrThrow);
    if (nodeLost !== undefined) exitCode = ExitCode.NodeLost;
  }
  if (interrupts.interrupted && exitCode === ExitCode.Ok) exitCode = ExitCode.Interrupted;
  for (const written of booksOf(book, nodes)) {
    written.profile.status = exitCode === ExitCode.Ok ? 'complete' : 'partial';
    written.save();
  }
  if (end.continuing) {
    exitCode = await trainOn(book, end.continuing, { interrupts, letGo: release, note: hooks.onNote });
  } else if (input.continueRun && end.jobExit) exitCode = jobExitCode(end.jobExit);
  return { ...shown(steps), exitCode, failureTail: end.failureTail, ...(nodeLost !== undefined ? { nodeLost } : {}) };
}

/** What the profile cost, the overlap probe included; the merged profile's is this node's (they ran the same). */
function recordCost({ book, nodes }: ProfileSteps, end: RunsEnd & { ran: ScheduleRan }, startedAt: number): void {
  const profile = book.profile;
  const probe = profile.overlapProbe ? [profile.overlapProbe] : [];
  const ran = {
    ...end.ran,
    launches: end.ran.launches + probe.length,
    jobIterations: end.ran.jobIterations + probe.reduce((sum, run) => sum + iterationsRun(run), 0),
  };
  profile.cost = profileCost([...book.results(), ...probe], ran, (Date.now() - startedAt) / 1000);
  if (nodes?.merged) nodes.merged.profile.cost = profile.cost;
  if (end.continuing) profile.cost.continued = end.continuing.cost;
}

/** The profile the outcome shows: on the coordinator's node the merged one, else this node's. */
function shown({ book, nodes }: ProfileSteps): Pick<ProfileRunOutcome, 'profile' | 'path'> {
  const written = nodes?.merged ?? book;
  return { profile: written.profile, path: written.path };
}

/** The options that fix the schedule, which every node of a profile must share. */
function scheduleOf(input: ProfileRunInput): Omit<ScheduleOptions, 'passes'> {
  return {
    modes: input.modes,
    precision: input.precision,
    minIterations: input.minIterations,
    maxIterations: input.maxIterations,
    cpuSweep: input.cpuSweep ?? [],
    workersSweep: input.workersSweep ?? [],
  };
}

function errorText(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
