/**
 * The reasons a mode's state proof gives (state-proof.ts decides which and with what figures). Each says what was
 * measured and, where the state did not hold, what the user can do.
 */
import { ENV } from '../schema/events.js';
import { formatBytes, percent as pct } from '../units.js';

/** How the reasons name fetched bytes, by where they come from. */
export const FETCH_WORDS = {
  storage: { fetched: 'read from storage', unmeasured: 'storage reads of the job could not be measured' },
  network: {
    fetched: 'fetched over the network',
    unmeasured: 'the bytes the job fetched over the network could not be measured',
  },
} as const;

export const PROOF_TEXT = {
  notAcknowledged: (mode: string) =>
    `the job never acknowledged ${mode} mode in a start event (is it speaking protocol v1?)`,
  synthetic: 'the job acknowledged synthetic mode: it replays its first batch without the loader',
  unmeasured: (words: string, source: string) => `${words} (${source})`,
  // A block among others whose readings do not cover it: the launch's bytes are every block's.
  blockUncovered: (source: string) =>
    `${source}: too few readings within this block, and the launch's are every block's`,
  readShare: (fraction: number, fetched: string) => `${pct(fraction)} of consumed bytes ${fetched}`,
  doesNotFit: 'the dataset does not fit in memory, so it cannot stay cached',
  notResident: (resident: number) => `only ${pct(resident)} of the dataset was in the page cache before the run`,
  cacheDidNotHold: (readText: string, note: string) =>
    `${readText}: the cache did not hold the dataset during the run, or the job read other files in the measured ` +
    `window (a validation set, checkpoints)${note}`,
  held: (resident: number, readText: string) => `${pct(resident)} resident before the run; ${readText}`,
  stillResident: (resident: number) => `${pct(resident)} of the dataset was still in the page cache before the run`,
  // Evicted, yet hardly read: the iterations do not read --data (an in-memory dataset such as torchvision's MNIST loads
  // it at start-up).
  hardlyReadEstimated: (readText: string, note: string) =>
    `only ${readText} although the dataset was not cached: either the job does not read --data during its iterations ` +
    `(it loads the dataset into memory before training, or reads from elsewhere), or it reads far less per ` +
    `sample than a whole file ` +
    `(a few large files read in parts, such as LMDB, HDF5 or tar shards)${note}`,
  hardlyRead: (readText: string) =>
    `only ${readText} although the dataset was not cached: the job does not read --data during its iterations ` +
    `(it may load the dataset into memory before training, or read from elsewhere), so there is no fetch to measure`,
  answeredLocally: (local: number, fetched: number) =>
    `${pct(local)} of consumed bytes answered in the job from the local copy, ${pct(fetched)} fetched over the network`,
  copyDidNotHold: (text: string, note: string) =>
    `${text}: the job fetched objects the hook did not answer (a client other than Python's http.client, a request ` +
    `other than GET or HEAD); profile with --net-meter proxy${note}`,
  copyNotRead: (text: string, note: string) =>
    `${text}: the job's reads went neither to the copy nor over the network (a cache of its own: name it with ` +
    `--job-cache)${note}`,
  partlyCached: (readText: string, note: string) => `only ${readText}: part of the data came from a cache${note}`,
  estimateNote:
    ' (consumed bytes estimated as samples x the mean file size, one file per sample; the job did not report bytes)',
  aside: (reason: string, bytes: number) =>
    `${reason} (not counted: ${formatBytes(bytes)} read while the training loader was idle between epochs: ` +
    `validation, checkpoints saved and copied)`,
  otherReadsMayBeAll: (reason: string, datasetOnly: number) =>
    `${reason}, but as little as ${pct(datasetOnly)} may be the dataset's`,
  subsetNotKept: (reason: 'does-not-fit' | 'warm-time', files: number, jobNote: string | undefined) =>
    `${reason === 'does-not-fit' ? 'the dataset does not fit in the memory budget' : 'warming the whole dataset would take too long'}, so the cached mode offered a resident subset of ${files} files (${ENV.subsetFile}), ` +
    `but the job never said it restricted itself to it${jobNote ? ` (${jobNote})` : ''}: it reads files that are not cached; ` +
    `use a torchvision ImageFolder/DatasetFolder or a dataset with a list of file paths, or ` +
    `honour ${ENV.subsetFile} (docs/protocol.md)`,
  onSubset: (files: number, jobSamples: number, jobNote: string | undefined, reason: string) =>
    `on a resident subset of ${files} files (the job kept ${jobSamples} samples${jobNote ? `: ${jobNote}` : ''}): ${reason}`,
} as const;
