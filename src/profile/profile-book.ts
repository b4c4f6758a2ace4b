import { analyze } from '../analysis/split.js';
import { fetchPlace } from '../schema/profile-source.js';
import { poolPasses, type ScheduledRun } from '../analysis/pool-passes.js';
import type { ModeResult, Profile } from '../schema/profile.js';
import { fileSink, type ArtifactSink } from '../store/artifact-sink.js';
import { laterEpochs } from '../whatif/later-epochs.js';

/** A run of the schedule as the book files it: its label, the workers it asked for, its CPU count (the sweep). */
export interface BookedRun {
  label: string;
  workers: number | null;
  cpuCount: number | null;
}

/** A profile written as its runs end: the node's own, and on the coordinator's node the merged one. */
export class ProfileBook {
  private readonly scheduled: ScheduledRun[] = [];

  constructor(
    readonly profile: Profile,
    readonly path: string,
    private readonly sink: ArtifactSink = fileSink,
    /** Called before each save: the last word on the profile's warnings. */
    private readonly beforeSave: () => void = () => {},
  ) {}

  /** Files a run's result and saves the profile. */
  record(run: BookedRun, result: ModeResult): void {
    const profile = this.profile;
    if (run.cpuCount === null) {
      this.scheduled.push({
        label: run.label,
        result,
        ...(run.workers !== null ? { group: `workers-${run.workers}` } : {}),
      });
      const pooled = poolPasses(this.scheduled);
      profile.modes = pooled.modes;
      if (pooled.groups.size > 0) profile.workersSweep = [...pooled.groups.values()];
      profile.analysis = analyze(profile.modes, {
        cpus: profile.host.cpus,
        gpus: profile.host.gpus.length,
        remote: fetchPlace(profile) === 'network',
      });
      this.refreshLaterEpochs();
    } else {
      profile.cpuSweep ??= [];
      profile.cpuSweep.push(result);
    }
    this.save();
  }

  /** The later epochs again: the what-if's prediction where the data does not fit, which the probes change. */
  refreshLaterEpochs(): void {
    this.profile.laterEpochs = laterEpochs(this.profile);
  }

  /** Every run filed so far, in order: the schedule's and the CPU sweep's. */
  results(): ModeResult[] {
    return [...this.scheduled.map((run) => run.result), ...(this.profile.cpuSweep ?? [])];
  }

  save(): void {
    this.beforeSave();
    this.sink.saveProfile(this.path, this.profile);
  }
}
