/**
 * What validate says of each point it ran: where it ran, whether the setting held (affinity, num_workers, the cache's
 * size), and why nothing could run. run-validate.ts decides; the words live here.
 */
import { formatBytes } from '../units.js';
import type { ResidencyVerdict } from './held.js';

/** A run's end: its status and why it stopped. */
const ended = (status: string, stopReason: string): string => `${status} (${stopReason})`;

export const VALIDATE_TEXT = {
  noCacheRemoves:
    "--cache recommended: no page-cache size removes this profile's fetch stall (see 'ds-analyzer whatif')",
  noFetchStall:
    '--cache recommended: this profile has no fetch stall to remove, so there is no cache to check; pass sizes instead',
  latencyRefused: (blocker: string) => `--latency: ${blocker}`,
  notACell: (entry: string) =>
    `--cells: '${entry}' is not CPUS@CACHE: give a CPU count and a cache size, e.g. 2@50% or 1@8GiB`,
  nothingAsked:
    'nothing to validate: pass --cache, --cpus, --cells, --workers, --storage-bw, --latency and/or --write-bw',
  redactedCommand:
    "the profile's command holds <redacted> where a secret was (a token in a URL, VAR=value, or a flag under " +
    'profile --redact), so validate cannot run it again: profile again with the secret in an environment ' +
    'variable the job reads, not on its command line',
  stalled: (mode: string, why: string) =>
    `the profile's ${mode} block stalled (${why}): its figures are no measurement to hold the model to; ` +
    'profile again once the data comes and the job runs through, then validate that profile',
  nothingToValidate: (obstacle: string) => `nothing to validate here: ${obstacle}; or pass --cpus`,
  /** Where a cached-mode point ran. */
  cachedWhere: (cpus: number[] | null, workers: number | null) =>
    cpus
      ? `on CPUs ${cpus.join(',')}`
      : workers !== null
        ? `at ${workers} loader workers per rank`
        : 'at the profiled settings',
  onCpus: (cpus: readonly number[], applied: string) => `; on CPUs ${cpus.join(',')}${applied}`,
  affinityHeld: (threads: number) => `; affinity held on all ${threads} threads`,
  affinityNotHeld: (outside: number, threads: number, example: string | null) =>
    `; affinity NOT held: ${outside} of ${threads} threads outside (${example})`,
  affinityUnchecked: 'the job ended before its threads could be checked',
  workersNotApplied: (ran: string, envName: string) =>
    `; num_workers NOT applied: the job reported ${ran} workers (${envName} needs the zero-code hook or the ` +
    `emulated job)`,
  cachedNote: (where: string, status: string, stopReason: string, applied: string) =>
    `cached mode ${where}: ${ended(status, stopReason)}${applied}`,
  coldNote: (rate: string, status: string, stopReason: string, unproven: string) =>
    `cold mode with reads held to ${rate}: ${ended(status, stopReason)}${unproven}`,
  coldUnproven: (reason: string) => `; cold state NOT proven (${reason})`,
  noLatency:
    'a latency point delays the requests of remote data at the metering proxy: this profile saw no requests ' +
    '(local files, or HTTPS tunnels); validate other settings',
  latencyBelow: (askedMs: number, profiledMs: number) =>
    `a first byte in ${askedMs.toFixed(0)} ms is sooner than the ${profiledMs.toFixed(1)} ms the profile ` +
    `measured: the proxy can add latency, not take it away; ask for ${Math.ceil(profiledMs)} ms or more`,
  latencyNote: (ms: string, addedMs: string, status: string, stopReason: string | null, unproven: string) =>
    `cold, every request delayed ${addedMs} ms to a first byte in ${ms} ms (${status}${stopReason ? `, ${stopReason}` : ''})${unproven}`,
  noThrottle: (obstacle: string) =>
    `--storage-bw: the data's reads cannot be held to a bandwidth here (${obstacle}): run as root with a ` +
    `writable io cgroup, or validate other settings`,
  noSaves:
    '--write-bw: the profile saw no checkpoint save the hook knows (torch.save, torch.distributed.checkpoint, ' +
    "Lightning's and Hugging Face's saves), so there is no checkpoint stall to check: profile a job that " +
    'saves, or time its writer with ds_analyzer.checkpoint()',
  noWriteThrottle: (obstacle: string) =>
    `--write-bw: the job's writes cannot be held to a rate here (${obstacle}): run as root with a writable io ` +
    `cgroup, or validate other settings`,
  writeNote: (rate: string, devices: readonly string[], status: string, stopReason: string) =>
    `cached mode with writes to ${devices.join(', ')} held to ${rate}: ${ended(status, stopReason)}`,
  writeSaves: (saves: number, perSaveMs: number, predictedMs: number) =>
    `; ${saves} saves, ${perSaveMs.toFixed(0)} ms each (predicted ${predictedMs.toFixed(0)} ms)`,
  writeNoSaves:
    '; the job made no save in this run, so its checkpoint stall is not measured (run more iterations: ' +
    '--max-iterations)',
  writeNotHeld: (perSaveMs: number, floorMs: number) =>
    `; the saves synced in ${perSaveMs.toFixed(0)} ms, well under the ${floorMs.toFixed(0)} ms their bytes take ` +
    `at this rate: they were written where the throttle does not reach (tmpfs, a network file system), so the ` +
    `rate was not tested`,
  /** Buffered saves under a cgroup v1 write throttle: what it holds and what it does not. */
  bufferedOnV1:
    "the saves were buffered (no fsync) and this host's write throttle is cgroup v1, which holds only the writes " +
    "the job's own processes submit: ext4's write-back of a file truncated and closed (a save over the last " +
    "checkpoint: the next save waits for it) is held, the kernel's background writeback (a save to a new " +
    'file) is not; where it is not, the stall measured here is the profiled one, not what storage this ' +
    'slow would cost',
  residencyUnmeasured: 'dataset residency not measured in the measured window: not held',
  residency: (r: ResidencyVerdict & { minBytes: number; maxBytes: number; meanBytes: number; sampled: boolean }) =>
    `dataset in page cache ${formatBytes(r.minBytes)}-${formatBytes(r.maxBytes)}, mean ${formatBytes(r.meanBytes)} ` +
    `(mincore, ${r.readings} readings${r.sampled ? ', sampled' : ''}, ${Math.round(r.inBandShare * 100)}% within ±${formatBytes(r.toleranceBytes)}): ${r.held ? 'held' : 'NOT held'}`,
  cacheNote: (targetBytes: number, held: string, status: string, stopReason: string) =>
    `target ${formatBytes(targetBytes)}; ${held}; first epoch not measured; ${ended(status, stopReason)}`,
} as const;
