import type { ResourceSample } from '../../src/schema/profile.js';
import type { Sampler, SamplerOptions } from '../../src/system/probes/samplers.js';

/** A fake sampler's starter, and what it was asked. */
export interface FakeSamplerStarter {
  /** Starts a sampler that reads nothing (pass as ModeRunInput.startSampler). */
  start: (options: SamplerOptions) => Sampler;
  /** The options of each start, in order. */
  started: SamplerOptions[];
  /** The root pids the samplers were given (setRoot), in order. */
  roots: number[];
}

/** A deterministic stand-in for startSampler (no /proc, no timer): each sampler hands back `samples`. */
export function fakeSamplerStarter(samples: readonly ResourceSample[]): FakeSamplerStarter {
  const started: SamplerOptions[] = [];
  const roots: number[] = [];
  const start = (options: SamplerOptions): Sampler => {
    started.push(options);
    return {
      setRoot: (pid) => void roots.push(pid),
      tick: () => undefined,
      samples: () => samples.slice(),
      stop: () => samples.slice(),
    };
  };
  return { start, started, roots };
}
