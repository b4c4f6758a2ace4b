import { costLine } from './cost-line.js';
import type { Profile } from '../schema/profile.js';
import { formatBytes, formatRate } from '../units.js';
import { formatEstimate, oneLine, table, wrapLine } from './format.js';
import { verdictLines } from './verdict-lines.js';
import { gpuRows } from './gpu-rows.js';
import { prepStagesLines } from './prep-stages-lines.js';
import { fetchPlace, networkLines } from './network-lines.js';
import {
  allRanksLine,
  driftLine,
  firstBatchLine,
  modeRows,
  stalledLines,
  nodeRows,
  pipelineStallLines,
  rankRows,
  splitRows,
  stallPartsLine,
} from './summary-rows.js';

/** The summary a person reads after `ds-analyzer profile`: modes, split, verdict, advice, caveats. */
export function renderSummary(
  profile: Profile,
  profilePath: string,
  options: { shownWarnings?: ReadonlySet<string> } = {},
): string {
  const out: string[] = [];
  const { dataset, analysis } = profile;
  const place = fetchPlace(profile);
  out.push(`${oneLine(profile.jobName)}: ${profile.status} profile, saved to ${profilePath}`);
  out.push(
    `dataset: ${dataset.files} ${dataset.remote ? 'objects' : 'files'}, ${formatBytes(dataset.bytes)}` +
      (dataset.fitsInMemory
        ? ''
        : dataset.remote
          ? " (does NOT fit in the profiler's cache)"
          : ' (does NOT fit in memory)') +
      (profile.options.storageBwBytesPerSec
        ? `; cold ${place} throttled to ${formatRate(profile.options.storageBwBytesPerSec)}`
        : ''),
  );
  out.push(...networkLines(profile));
  const cost = costLine(profile);
  if (cost) out.push(cost);
  out.push('');

  out.push(table(modeRows(profile), [1, 2, 3, 4, 5]));
  for (const line of [...stalledLines(profile), allRanksLine(profile), firstBatchLine(profile)])
    if (line) out.push(line);
  const nodes = nodeRows(profile);
  if (nodes) out.push('', table(nodes, [2, 4]));
  const ranks = rankRows(profile);
  if (ranks) out.push('', table(ranks.rows, [1, 2, 3, 4]));
  const gpus = gpuRows(profile);
  if (gpus) out.push('', table(gpus));
  const probe = profile.overlapProbe;
  if (probe?.summary) {
    out.push(
      `overlap probe: cold with ${(probe.residentShare * 100).toFixed(0)}% of the dataset held resident: ` +
        `${formatEstimate(probe.summary.iterMs)} ms per iteration; ` +
        (probe.state.proven
          ? `proven: ${probe.state.reason} (whatif fits the overlap of reads and pre-processing from it)`
          : `UNPROVEN: ${probe.state.reason} (whatif does not use it)`),
    );
  }

  if (analysis) {
    out.push('');
    out.push(table(splitRows(profile), [1, 2]));
    for (const line of [stallPartsLine(profile), driftLine(profile), ...pipelineStallLines(profile)])
      if (line) out.push(line);
    const facts = [
      analysis.gpuSamplesPerSec !== null
        ? `accelerator could take ${analysis.gpuSamplesPerSec.toFixed(1)} samples/s`
        : null,
      analysis.prepSamplesPerSec !== null ? `prep delivers ${analysis.prepSamplesPerSec.toFixed(1)} samples/s` : null,
      analysis.coldSamplesPerSec !== null ? `cold ${place} ${analysis.coldSamplesPerSec.toFixed(1)} samples/s` : null,
    ].filter(Boolean);
    if (facts.length) out.push(`rates: ${facts.join(' · ')}`);
    const bandwidth = [
      analysis.storageReadBytesPerSec !== null ? `${place} read ${formatRate(analysis.storageReadBytesPerSec)}` : null,
      analysis.memoryReadBytesPerSec !== null ? `memory read ${formatRate(analysis.memoryReadBytesPerSec)}` : null,
      analysis.prepCpuSecPerSample !== null
        ? `prep CPU ${(analysis.prepCpuSecPerSample * 1000).toFixed(2)} ms/sample`
        : null,
    ].filter(Boolean);
    if (bandwidth.length) out.push(`measured: ${bandwidth.join(' · ')}`);
    out.push(...prepStagesLines(profile));
    out.push('');
    for (const { label, text } of verdictLines(profile))
      out.push(...wrapLine(`verdict${label ? `, ${label}` : ''}:`, text, '  '));
    if (analysis.straggler) out.push(...wrapLine('straggler:', analysis.straggler.text, '  '));
    else if (analysis.straggler === null)
      out.push(
        ...wrapLine(
          'straggler:',
          "none: no rank waits for its data beyond the other ranks' noise and 3% of the iteration",
          '  ',
        ),
      );
    out.push(...wrapLine('advice: ', analysis.advice, '  '));
    if (analysis.caveats.length) {
      out.push('caveats:');
      for (const caveat of analysis.caveats) out.push(...wrapLine('  -', caveat, '    '));
    }
  }
  // A run that printed its warnings as they came (profile, demo) prints each once: those not again under the summary.
  const shown = profile.warnings.filter((w) => options.shownWarnings?.has(w));
  if (shown.length > 0)
    out.push(
      `${shown.length} warning${shown.length === 1 ? '' : 's'} printed above as ${shown.length === 1 ? 'it' : 'they'} ` +
        "came (kept in the profile; 'ds-analyzer report' shows them again)",
    );
  for (const warning of profile.warnings.filter((w) => !options.shownWarnings?.has(w)))
    out.push(...wrapLine('warning:', warning, '  '));
  return out.join('\n') + '\n';
}
