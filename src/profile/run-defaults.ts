// The defaults profile, demo and validate share, so a measurement is taken the same way by each. Flag defaults are the
// text a user would type ('5%', '15m'), read by the flag's own parser; settings no flag reaches are numbers with their
// unit in the name.

import { parseDurationSec } from '../units.js';
import { STALL_LIMITS } from '../analysis/stalls.js';

/** Defaults of `profile`'s flags, as typed on the command line. */
export const PROFILE_FLAG_DEFAULTS = {
  /** --precision: a mode stops when the 95% CI of the iteration time is within this. */
  precision: '5%',
  /** --min-iterations: measured iterations before precision may stop a mode. */
  minIterations: '50',
  /** --max-iterations: iteration budget per mode. */
  maxIterations: '2000',
  /** --timeout: the job tree is killed after this long in one mode. */
  timeout: '15m',
  /** --first-iteration-timeout: a mode whose job reports no iteration within this long is stopped. */
  firstIterationTimeout: '5m',
  /** --hang-timeout: a job with no iteration for this long, and 30x its median iteration, is stopped as hung. */
  hangTimeout: `${STALL_LIMITS.hungMinSec}s`,
  /** --stop-grace: time the job gets to exit after it is asked to stop. */
  stopGrace: '30s',
  /** --profiles-dir: folder for profiles. */
  profilesDir: 'profiles',
  /** --nodes-timeout: with several nodes, how long to wait for every node to arrive. */
  nodesTimeout: '5m',
} as const;

/** Defaults of `validate`'s flags, as typed on the command line. */
export const VALIDATE_FLAG_DEFAULTS = {
  /** --epochs: epochs per cache point; the first (cold) one is not measured. */
  epochs: '4',
  /** --precision: control and CPU points stop when the 95% CI of the iteration time is within this. */
  precision: '5%',
  /** --max-iterations: iteration budget of control and CPU points. */
  maxIterations: '1000',
  /** --timeout: a point whose job runs longer than this is killed. */
  timeout: '15m',
  /** --profiles-dir: folder searched for the newest profile. */
  profilesDir: 'profiles',
} as const;

/** How every run of the job is watched and stopped, where no flag sets it. */
export const SUPERVISION = {
  /** How often the job's events and resources are read, ms. */
  pollMs: 250,
  /** Seconds between SIGTERM to the job's process group and SIGKILL. */
  killGraceSec: 10,
  /** Seconds the job gets to exit after it is asked to stop (profile's --stop-grace default). */
  stopGraceSec: parseDurationSec(PROFILE_FLAG_DEFAULTS.stopGrace, '--stop-grace'),
  /** Seconds a job may run before its first iteration (profile's --first-iteration-timeout default). */
  firstIterationTimeoutSec: parseDurationSec(PROFILE_FLAG_DEFAULTS.firstIterationTimeout, '--first-iteration-timeout'),
  /** Fewest seconds without an iteration before a job is stopped as hung (profile's --hang-timeout default). */
  hangTimeoutSec: parseDurationSec(PROFILE_FLAG_DEFAULTS.hangTimeout, '--hang-timeout'),
  /** Whether the accelerator is synchronised at iteration boundaries (DSA_SYNC=1). */
  sync: true,
} as const;

/** Settings of the page-cache states (cached warm-up, cold keeper), the same for every command. */
export const CACHE_STATE_SETTINGS = {
  /**
   * How often the cold keeper evicts what the job read back, ms: a drain costs about 0.2 ms of CPU (at 100 ms most of
   * the keeper's 0.4% of a CPU); only a dataset whose epoch is shorter would be read warm, and the proof says so.
   */
  coldKeeperIntervalMs: 250,
  /** Parallel readers that warm the dataset for the cached mode. */
  warmConcurrency: 8,
} as const;

/** The demo's run of the emulated job: fewer iterations and shorter limits, so that it ends in minutes. */
export const DEMO_RUN = {
  /** A mode stops when the 95% CI of the iteration time is within this share. */
  precision: 0.03,
  /** Measured iterations before precision may stop a mode. */
  minIterations: 60,
  /** Iteration budget per mode. */
  maxIterations: 600,
  /** The job tree is killed after this long in one mode, s. */
  timeoutSec: 300,
  /** Seconds the emulated job gets to exit after it is asked to stop. */
  stopGraceSec: 20,
  /** Seconds between SIGTERM and SIGKILL. */
  killGraceSec: 5,
} as const;

/** The quick demo's precision (--quick, --remote), profile's: at 3% its noisy cold blocks took 52 of its 63 s. */
export const QUICK_DEMO_PRECISION = 0.05;

/** Least iterations a validate control or CPU point runs before its precision may stop it. */
export const CONTROL_MIN_ITERATIONS = 60;

/** How many times its epochs a validate cache point may run when its precision needs more than them. */
export const CACHE_POINT_EPOCHS_BUDGET = 3;

/** Runs of each mode: the order mirrored once (S C K K C S), so a steady drift cancels (docs/method.md, "Drift"). */
export const DEFAULT_PASSES = 2;
