// The probes after the modes: the overlap probe (the cold mode with part of the dataset held in the page cache) and the
// storage read probe. Each one that fails is reported, never fatal: the modes are measured and saved.
import type { Profile } from '../schema/profile.js';
import { isAbort } from '../system/network/deadlines.js';
import { EndpointError } from '../system/network/remote-objects.js';
import { probeShare, proveProbe, residentSubset, stageSecPerSample } from './overlap-probe.js';
import type { ProfileSteps } from './profile-schedule.js';
import { PROFILE_RUN_TEXT } from './run-text.js';
import { storageProbe } from './storage-probe.js';

/** The overlap probe after the modes, saved in the profile; a failed one is reported, not fatal. */
export async function overlapStep(steps: ProfileSteps): Promise<void> {
  const { hooks, book, warn } = steps;
  const probe = await overlapProbe(steps);
  if (!probe) return;
  book.profile.overlapProbe = probe;
  book.refreshLaterEpochs();
  book.save();
  hooks.onModeDone?.(probe);
  if (probe.status === 'failed') warn(PROFILE_RUN_TEXT.overlapProbeFailed(probe.stopReason, probe.logs.stderr));
}

/** The storage read probe after the modes; one that cannot read is reported, not fatal. */
export async function storageProbeStep({ input, book, dataset, warn }: ProfileSteps): Promise<void> {
  const profile = book.profile;
  const probe = await storageProbe(profile, dataset.files, input.readProber ?? input.dataSource.readProber).catch(
    (error: unknown) => {
      // An endpoint that stopped answering ends the profile (what follows would wait on it too), as does Ctrl-C.
      if ((error instanceof EndpointError && error.stalled) || isAbort(error)) throw error;
      warn(PROFILE_RUN_TEXT.storageProbeFailed(error instanceof Error ? error.message : String(error)));
      return null;
    },
  );
  if (!probe) return;
  profile.storageProbe = probe;
  book.refreshLaterEpochs();
  if (!probe.proven) warn(PROFILE_RUN_TEXT.storageProbeUnproven(probe.reason));
}

/** Folder and progress label of the overlap probe. */
const PROBE_LABEL = 'cold-partial';

/** The cold mode with the planned share held cached; null, with a warning, when there is nothing to probe. */
async function overlapProbe({
  book: { profile },
  dataset,
  input,
  runOnce,
  warn,
}: ProfileSteps): Promise<NonNullable<Profile['overlapProbe']> | null> {
  const source = input.dataSource;
  if (!source.heldShareState) {
    warn(PROFILE_RUN_TEXT.overlapProbeNoHeldShare);
    return null;
  }
  const stages = stageSecPerSample(profile.modes.cached, profile.modes.cold);
  if (!stages) {
    warn(PROFILE_RUN_TEXT.overlapProbeNeedsModes);
    return null;
  }
  const share = probeShare(stages.fetch, stages.prep);
  if (share === null) {
    warn(PROFILE_RUN_TEXT.overlapProbeMoot);
    return null;
  }
  const resident = residentSubset(dataset.files, share);
  const heldShare = resident.reduce((sum, f) => sum + f.bytes, 0) / Math.max(1, dataset.bytes);
  const cacheState = source.heldShareState(resident);
  const result = await runOnce({ mode: 'cold', label: PROBE_LABEL, argv: input.argv, cacheState });
  const state = proveProbe(result.state, heldShare, dataset.source?.fetchesFrom);
  return { ...result, state, residentShare: heldShare };
}
