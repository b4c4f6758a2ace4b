// validate --write-bw: the job run again with its writes held to a rate, its checkpoint stall and iteration time
// against whatif --write-bw's prediction (pipelineWhatif: the steady pace plus the saves at that bandwidth). Pure:
// measure-point.ts runs the job under the throttle and hands the results here.
import { checkpointStall } from '../analysis/checkpoint-stall.js';
import type { ModeResult, Profile } from '../schema/profile.js';
import { pipelineWhatif, type SteadyPace } from '../whatif/pipeline-stalls.js';

/** The bound whatif --write-bw is held to against a run at that bandwidth: the stall within 15%... */
export const WRITE_STALL_TOLERANCE = 0.15;
/** ...or within this share of the iteration, for stalls too small for a share of themselves to mean much. */
export const WRITE_STALL_ITERATION_FLOOR = 0.03;
/**
 * A synced save that took less than this share of bytes / rate was not held: its writes went where the throttle does
 * not reach.
 */
const HELD_SHARE = 0.8;

/** What the model predicts at a write bandwidth, the rest as profiled. */
export interface WritePrediction {
  /** Iteration time with the saves and epoch starts, ms. */
  iterMs: number;
  /** Samples/s at that iteration time, all ranks. */
  samplesPerSec: number;
  /** Checkpoint stall amortised over the iterations between saves, ms. */
  stallMsPerIter: number;
  /** One save's blocking time, ms. */
  perSaveMs: number;
  /** Whether the profiled saves synced (fsync) before returning. */
  synced: boolean;
  /** Bytes a save wrote, or null when the job did not say. */
  bytesPerSave: number | null;
}

/** The model's answer at `bytesPerSec` on top of the steady `pace`; null when the profile saw no save. */
export function writePrediction(profile: Profile, pace: SteadyPace, bytesPerSec: number): WritePrediction | null {
  const pipeline = pipelineWhatif(profile, { writeBytesPerSec: bytesPerSec }, pace, pace);
  const checkpoint = pipeline?.checkpoint;
  if (!pipeline || !checkpoint) return null;
  return {
    iterMs: pipeline.prediction.iterMs,
    samplesPerSec: pipeline.prediction.samplesPerSec,
    stallMsPerIter: checkpoint.asked.stallMsPerIter,
    perSaveMs: checkpoint.asked.perSaveMs,
    synced: checkpoint.profiled.synced,
    bytesPerSave: checkpointStall(profile.modes)?.bytesPerSave ?? null,
  };
}

/** A write point's run, in the figures the check needs. */
export interface WriteMeasurement {
  /** Checkpoint stall per iteration from the run's own save events, ms; null when it saved nothing. */
  stallMsPerIter: number | null;
  /** Mean blocking time of its saves, ms; null when it saved nothing. */
  perSaveMs: number | null;
  /** Saves it made. */
  saves: number;
}

/** The run's checkpoint stall, by the same arithmetic as the profile's (checkpointStall over its saves). */
export function measuredWrites(result: ModeResult): WriteMeasurement {
  const stall = checkpointStall({ [result.mode]: result });
  return { stallMsPerIter: stall?.ms.mean ?? null, perSaveMs: stall?.perSaveMs.mean ?? null, saves: stall?.saves ?? 0 };
}

/**
 * Whether the stall is as predicted: within WRITE_STALL_TOLERANCE of the measured stall, or of
 * WRITE_STALL_ITERATION_FLOOR of the measured iteration (the bound for the stall itself is the larger of a share and 3%
 * of the iteration); null without a measurement.
 */
export function stallWithinTolerance(
  predictedMs: number,
  measuredMs: number | null,
  measuredIterMs: number | null,
): boolean | null {
  if (measuredMs === null) return null;
  const room = Math.max(WRITE_STALL_TOLERANCE * measuredMs, WRITE_STALL_ITERATION_FLOOR * (measuredIterMs ?? 0));
  return Math.abs(predictedMs - measuredMs) <= room;
}

/**
 * Whether the throttle held the saves: a save that synced blocks at least for its bytes at the rate, so one much faster
 * wrote where the throttle does not reach (tmpfs, a network file system). Buffered saves cannot tell, nor saves of
 * unknown size: null.
 */
export function writeHeld(
  prediction: WritePrediction,
  measured: WriteMeasurement,
  bytesPerSec: number,
): boolean | null {
  if (!prediction.synced || prediction.bytesPerSave === null || measured.perSaveMs === null) return null;
  return measured.perSaveMs >= HELD_SHARE * (prediction.bytesPerSave / bytesPerSec) * 1000;
}
