/** The GPUs table of a profile's reports: each GPU's mean utilisation and peak memory, mode by mode. */
import { MODES } from '../schema/events.js';
import type { Profile } from '../schema/profile.js';
import { gpuUsage, type GpuUsage } from '../analysis/gpu-usage.js';
import { formatBytes } from '../units.js';

function cell(usage: GpuUsage | undefined): string {
  if (!usage) return '—';
  const util = usage.meanUtilPct === null ? 'util —' : `${usage.meanUtilPct.toFixed(0)}%`;
  const mem = usage.peakMemBytes === null ? 'memory —' : `peak ${formatBytes(usage.peakMemBytes)}`;
  return `${util} · ${mem} (${usage.samples})`;
}

/**
 * Header + rows: a GPU a row, a mode a column, each cell its mean utilisation, peak memory and the number of samples
 * behind them; null when no mode sampled a GPU.
 */
export function gpuRows(profile: Profile): string[][] | null {
  const modes = MODES.filter((mode) => profile.modes[mode]);
  const usage = new Map(modes.map((mode) => [mode, gpuUsage(profile.modes[mode]!.resources)]));
  const indexes = [...new Set([...usage.values()].flat().map((u) => u.index))].sort((a, b) => (a ?? -1) - (b ?? -1));
  if (indexes.length === 0) return null;
  const header = ['GPUs (nvidia-smi)', ...modes.map((mode) => `${mode}: mean util · peak memory (samples)`)];
  const rows = indexes.map((index) => [
    index === null ? 'all GPUs (mean, memory summed)' : `GPU ${index}`,
    ...modes.map((mode) => cell(usage.get(mode)!.find((u) => u.index === index))),
  ]);
  return [header, ...rows];
}
