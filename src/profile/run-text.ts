/**
 * What profile and validate tell the user about their runs: warnings of the schedule and the probes, the notes on the
 * reclaim pause, and the errors of starting the job as asked. The code decides when each applies (run-profile.ts,
 * run-setup.ts, run-as.ts, python-flag.ts); the words live here.
 */
import { CAPABILITY_TEXT } from '../system/probes/capability-text.js';

/** Notes on DAMON's reclaim pause, by command. */
export const RECLAIM_TEXT = {
  profile: {
    paused: (names: string) =>
      `${names} (DAMON pageout of idle memory, the page cache included) paused while profiling, so its pageout ` +
      `does not take the warmed files (each mode's state proof says whether its state held); ` +
      'turned back on when the profile ends, by a guardian process if this one is killed. Its pageout also takes ' +
      "the job's own idle pages " +
      '(the libraries its loader workers map), so the job may run at another pace where it runs: --keep-reclaim ' +
      'measures with it running',
    running: (reclaimers: string, why: string) =>
      `${reclaimers}${why}: ${CAPABILITY_TEXT['no-proactive-reclaim'].impact}; ${CAPABILITY_TEXT['no-proactive-reclaim'].fix}`,
    kept: ' (--keep-reclaim)',
  },
  validate: {
    paused: (names: string) =>
      `${names} paused while the points run, as profile does; turned back on after (--keep-reclaim leaves it running)`,
    running: (reclaimers: string, why: string) =>
      `${reclaimers} runs during the points${why}: its scans take CPU and its pageout takes the dataset's page cache`,
    kept: '',
  },
} as const;

/** Warnings of a profile's schedule and its probes. */
export const PROFILE_RUN_TEXT = {
  singlePass:
    'one run per mode (--single-pass): the intervals hold the noise within each run, not a drift of the ' +
    "machine's pace between runs",
  workersNotApplied: (envName: string, asked: number, ran: string) =>
    `workers sweep skipped: the job did not apply ${envName}=${asked} (its start event reports ${ran} workers ` +
    `and no script setting); ` +
    'only a torch DataLoader seen by the zero-code hook, or the emulated job, can change its workers; the manual ' +
    'API and the event protocol cannot',
  overlapProbeFailed: (stopReason: string, stderrLog: string) =>
    `the overlap probe failed (${stopReason}); its output is in ${stderrLog}`,
  overlapProbeNeedsModes: 'overlap probe not run: it needs the cached and cold modes to have completed',
  overlapProbeNoHeldShare: 'overlap probe not run: this data source cannot hold a share of the data cached',
  overlapProbeMoot:
    'overlap probe not run: reads take no longer than pre-processing per sample, so how they overlap does not ' +
    'limit the job',
  storageProbeFailed: (message: string) =>
    `the storage read probe failed (${message}); the what-if keeps the cold mode's read rate as a lower bound`,
  failedElsewhere: (label: string) =>
    `the ${label} run did not end well on another node, so every node stops: the merged profile, on the node ` +
    `that hosts the coordinator, says which and why`,
  storageProbeUnproven: (reason: string) =>
    `the storage read probe is ${reason}; the what-if keeps the cold mode's read rate as a lower bound`,
  notSwitchable: (launches: number, severalNodes: boolean) =>
    severalNodes
      ? `the job did not offer to switch modes on several nodes (its ranks share no torch.distributed process group ` +
        `to wait for every node's cache through, or it does not read DSA_CONTROL_FILE), so it was launched ` +
        `${launches} times, once a mode (docs/multi-node.md, "One launch on several nodes")`
      : `the job did not offer to switch modes (no switchModes in its start event: a protocol job that does not read ` +
        `DSA_CONTROL_FILE), so it was launched ${launches} times, once a mode; ` +
        'a job under the PyTorch hook or ds_analyzer.iterate() switches in one launch (docs/protocol.md, "One launch")',
  // Why the modes got a launch each (the profile's cost.scheduleReason).
  separateAsked: 'one launch a run was asked for (--separate-launches)',
  separateWorkersSweep:
    'a workers sweep (--workers) needs a launch a run: the loader workers are set when the job starts',
  separateSource: 'this data source cannot set a mode under a running job',
  noThrottle: '--storage-bw: this data source cannot throttle its reads; omit --storage-bw',
  separateNotSwitchable: 'the job did not offer to switch modes (no switchModes in its start event)',
  // profile --continue (continue-run.ts).
  continueNeedsOneLaunch: (reason: string | null) =>
    `--continue rides one launch of the real run, with every mode a block of it, and nothing launched after: ` +
    `${reason ?? 'fewer than two modes were asked'}; drop --continue, or the option that stands in the way`,
  continueOutputs:
    'the job is the real run (--continue): its checkpoints are saved for real and its trackers log as they would; ' +
    "a synthetic block's saves go to scratch files, and what the block trained is undone at its end",
  continueNotHeld: (label: string, reason: string) =>
    `the ${label} block trained on real batches, not replays: the job's training state could not be held to undo ` +
    `it (${reason}), so it is left out of the profile; raise DSA_SNAPSHOT_SHARE, or profile without --continue`,
  trainingOn: (path: string, log: string | null) =>
    `the blocks are measured and the profile is written to ${path}; the job trains on to its end, unprofiled` +
    `${log ? ` (its output goes on to ${log})` : ''}, and this command exits with the job's exit code`,
} as const;

/** Errors of starting the job as asked: --as-user (or sudo's SUDO_USER) and --python. */
export const JOB_START_TEXT = {
  asUserFlag: (spec: string) => `--as-user ${spec}`,
  sudoUser: (spec: string) => `under sudo, the job runs as ${spec} (SUDO_USER)`,
  /** `flag` is asUserFlag or sudoUser: what asked for the user. */
  noSuchUser: (flag: string, spec: string) =>
    `${flag}: no such user on this machine (getent passwd ${spec} found none): give a user name or uid`,
  notRoot: (spec: string) =>
    `--as-user ${spec}: only root can start the job as another user: ` +
    'run ds-analyzer under sudo, or leave --as-user out',
  noSetpriv: (flag: string, user: string) =>
    `${flag}: setpriv (util-linux) starts it as ${user} with their groups, and it is not on PATH: ` +
    'install util-linux, or pass --as-user root to run the job as root',
  /** `why` is KERNEL_TEXT.notExecutable or notFound. */
  pythonNotRunnable: (python: string, why: string) =>
    `--python ${python} ${why}: ` +
    "give the interpreter's path, e.g. --python ~/venv/bin/python (which python, before sudo, prints it)",
} as const;

/** What profile says of other profiles running on the machine (run-registry.ts). */
export const REGISTRY_TEXT = {
  refused: (other: { pid: number; profile: string; startedAt: string }) =>
    `another profile runs on this machine (PID ${other.pid}, writing ${other.profile}, since ${other.startedAt}): ` +
    "two at once evict each other's warmed data and share the CPUs; wait for it to end, or pass " +
    '--allow-concurrent to run beside it (both profiles will say so)',
  beside: (other: { pid: number; profile: string; startedAt: string }) =>
    `another profile ran on this machine at the same time (PID ${other.pid}, writing ${other.profile}, ` +
    `since ${other.startedAt}): each may have evicted the other's warmed data and taken its CPU, so the ` +
    'modes measured beside it are not a quiet machine',
} as const;
