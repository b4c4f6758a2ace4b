// What a profiled job may write of the user's (docs/side-effects.md, "Your outputs"): by default, nothing. Checkpoint
// saves go to scratch files beside their targets in every mode (the Python hook: same file system, same cost, removed
// at the exit); the common experiment trackers are disabled or pointed at the profile's scratch folder. --keep-outputs
// leaves all of it to the job.
import { join } from 'node:path';
import { ENV } from '../schema/events.js';

/** The job's variables for its outputs: the scratch folder, and the trackers' settings. */
export function outputsEnv(keepOutputs: boolean, scratchDir: string): Record<string, string> {
  if (keepOutputs) return { [ENV.keepOutputs]: '1' };
  return {
    [ENV.scratchDir]: scratchDir,
    // Weights & Biases: no run is created, nothing is sent or written (wandb.init returns a no-op run).
    WANDB_MODE: 'disabled',
    // MLflow: runs are logged to a file store in the scratch folder, not to the user's tracking server.
    MLFLOW_TRACKING_URI: `file://${join(scratchDir, 'mlruns')}`,
  };
}

/** The line that says what was done about the job's outputs; `offersKeep`: the command has --keep-outputs. */
export function outputsNote(keepOutputs: boolean, scratchDir: string, offersKeep = true): string {
  return keepOutputs
    ? "the job's outputs are its own (--keep-outputs): its checkpoints are saved for real, and its trackers log " +
        'as they would'
    : `the job's checkpoints go to scratch files beside them, removed at its exit; W&B is disabled (WANDB_MODE), ` +
        `MLflow and TensorBoard log under ${scratchDir}; ` +
        `${ENV.profiling}=1 tells the script it is profiled${offersKeep ? '; --keep-outputs saves and logs for real' : ''}`;
}
