/**
 * Prep taken apart: the training loader's processes timed each stage of a sample's preparation where the zero-code hook
 * sees it (file read, decode, each transform of a Compose, collation: python/ds_analyzer/_stages.py). Here those totals
 * become a cost per sample and a share of the loader's time, and their sum is checked against the prep CPU per sample
 * that the differential method measured from the whole job tree (cached less synthetic): the stages are timed, the rest
 * (IPC of the batches, the dataset's own code, pinning) is only the difference, and says so. The stages' clock is the
 * wall's; their CPU is estimated from the fetch's measured CPU share.
 */
import type { ModeResult, PrepStage, PrepStages, PrepStageTotals } from '../schema/profile.js';
import { PREP_STAGES_TEXT } from './prep-stages-text.js';

/**
 * How far the stages' estimated CPU may lie from the measured prep CPU and still be called in agreement, as a fraction
 * of the measurement. The measurement is the tree's CPU less the synthetic mode's, a difference of two noisy rates, and
 * it holds what no stage does: the batches' transfer between processes, pinning, the dataset's own code, and a step
 * slowed by prep's use of the CPU caches (docs/method.md). The example ImageFolder job (test/e2e/pytorch.test.ts) came
 * out at 82% and 94% in two runs on a loaded 2-core machine.
 */
export const COVERAGE_TOLERANCE = 0.25;

/** The runs' stage totals added up, as a field only where one of them has any. */
export function stageTotalsOf(results: readonly ModeResult[]): Pick<ModeResult, 'prepStages'> {
  const totals = sumStageTotals(results.map((r) => r.prepStages));
  return totals ? { prepStages: totals } : {};
}

/** The stage totals of several runs or nodes of one mode, added up; undefined when none has any. */
export function sumStageTotals(parts: readonly (PrepStageTotals | undefined)[]): PrepStageTotals | undefined {
  const known = parts.filter((p): p is PrepStageTotals => p !== undefined);
  if (known.length === 0) return undefined;
  const byKey = new Map<string, PrepStageTotals['stages'][number]>();
  for (const part of known) {
    for (const stage of part.stages) {
      const key = `${stage.kind}\0${stage.name}`;
      const into = byKey.get(key) ?? { ...stage, ms: 0, calls: 0 };
      into.ms += stage.ms;
      into.calls += stage.calls;
      byKey.set(key, into);
    }
  }
  const add = (pick: (p: PrepStageTotals) => number) => known.reduce((sum, p) => sum + pick(p), 0);
  return {
    processes: add((p) => p.processes),
    samples: add((p) => p.samples),
    batches: add((p) => p.batches),
    fetchMs: add((p) => p.fetchMs),
    fetchCpuMs: add((p) => p.fetchCpuMs),
    stages: [...byKey.values()],
  };
}

/** What the stages are read against. */
export interface PrepStagesInput {
  /** The cached mode: the one prep CPU is measured from (undefined when it was not run). */
  cached: ModeResult | undefined;
  /** The measured prep CPU per sample (analysis.prepCpuSecPerSample), s; null when not measured. */
  prepCpuSecPerSample: number | null;
  /** GPUs on the host; null when not known. */
  gpus: number | null;
}

/** The stages per sample, costliest first, checked against the measured prep CPU; null when no loader reported one. */
export function prepStages(input: PrepStagesInput): PrepStages | null {
  const totals = input.cached?.prepStages;
  if (!totals || totals.samples === 0 || totals.fetchMs <= 0) return null;
  const perSample = (ms: number) => ms / totals.samples;
  const fetchMsPerSample = perSample(totals.fetchMs);
  // The stages are timed on the wall clock (a thread-CPU clock costs microseconds a read, measured at 3.9 us on a
  // loaded 2-core machine); the fetch as a whole on both. Where the loader's processes waited for a core, every
  // CPU-bound stage waited in proportion to its length, so its CPU is its wall time times the fetch's CPU share. Capped
  // at 1: the thread's clock misses the intra-op threads of a main process without workers.
  const fetchCpuShare = Math.min(1, totals.fetchCpuMs / totals.fetchMs);
  const stages: PrepStage[] = totals.stages
    .map((s) => ({
      kind: s.kind,
      name: s.name,
      msPerSample: perSample(s.ms),
      cpuMsPerSample: perSample(s.ms) * fetchCpuShare,
      share: s.ms / totals.fetchMs,
    }))
    .sort((a, b) => b.msPerSample - a.msPerSample);
  const stagesMsPerSample = stages.reduce((sum, s) => sum + s.msPerSample, 0);
  const stagesCpuMsPerSample = stagesMsPerSample * fetchCpuShare;
  const measured =
    input.prepCpuSecPerSample !== null && input.prepCpuSecPerSample > 0 ? input.prepCpuSecPerSample * 1000 : null;
  const coverage = measured !== null ? stagesCpuMsPerSample / measured : null;
  return {
    mode: 'cached',
    samples: totals.samples,
    stages,
    stagesMsPerSample,
    stagesCpuMsPerSample,
    fetchMsPerSample,
    fetchCpuMsPerSample: perSample(totals.fetchCpuMs),
    // Exclusive times inside the fetch never exceed it; rounding in the job's lines can, by a hair.
    unnamedMsPerSample: Math.max(0, fetchMsPerSample - stagesMsPerSample),
    fetchCpuShare,
    measuredPrepCpuMsPerSample: measured,
    coverage,
    withinTolerance: coverage !== null ? Math.abs(coverage - 1) <= COVERAGE_TOLERANCE : null,
    tolerance: COVERAGE_TOLERANCE,
    copy: input.gpus === 0 ? PREP_STAGES_TEXT.noCopy : PREP_STAGES_TEXT.copyNotTimed,
  };
}
