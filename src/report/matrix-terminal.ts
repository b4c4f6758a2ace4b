import type { WhatifMatrix } from '../whatif/matrix.js';
import { formatBytes } from '../units.js';
import { oneLine, table } from './format.js';

/** A cell's rate with the range its assumptions span, where that is wider than 1%. */
function cellText(cell: WhatifMatrix['cells'][number]): string {
  const { low, high } = cell.samplesPerSecRange;
  const span = high - low > 0.01 * cell.samplesPerSec ? ` (${low.toFixed(0)}–${high.toFixed(0)})` : '';
  return `${cell.samplesPerSec.toFixed(1)}${span} ${cell.bottleneck[0].toUpperCase()}${cell.measured ? '*' : ''}`;
}

/** The CPU x cache table as a person reads it: a row per cache size, a column per CPU count. */
export function renderMatrix(matrix: WhatifMatrix): string {
  const out = [
    `${oneLine(matrix.jobName)}: predicted samples/s, all ranks together, by CPUs and cache (${matrix.profilePath})`,
    `profiled: ${matrix.profiled.cpus} CPUs, ${formatBytes(matrix.profiled.cacheBytes)} cache for ` +
      `a ${formatBytes(matrix.datasetBytes)} dataset`,
    '',
  ];
  const header = ['cache \\ CPUs', ...matrix.cpus.map(String)];
  const rows = matrix.cacheBytes.map((cache) => [
    `${formatBytes(cache)} (${matrix.datasetBytes > 0 ? ((100 * cache) / matrix.datasetBytes).toFixed(0) : '0'}%)`,
    ...matrix.cpus.map((cpus) => cellText(matrix.cells.find((c) => c.cpus === cpus && c.cacheBytes === cache)!)),
  ]);
  out.push(
    table([header, ...rows], header.map((_, k) => k).slice(1)),
    '',
    'C, P, F: the stage that limits the cell (compute, prep, fetch); *: the profile ran this setting; ' +
      '(low–high): the range over what the model assumed',
  );
  if (matrix.assumptions.length > 0) {
    out.push('assumed where nothing measured it:');
    for (const text of matrix.assumptions) out.push(`  - ${text}`);
  }
  if (matrix.validateCommand) out.push(`check cells: ${matrix.validateCommand}`);
  return out.join('\n') + '\n';
}
