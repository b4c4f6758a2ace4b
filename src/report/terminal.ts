import { costLine } from './cost-line.js';
import type { Analysis, Profile } from '../schema/profile.js';
import { formatBytes, formatRate } from '../units.js';
import { formatEstimate, oneLine, table, wrapLine } from './format.js';
import { verdictLines } from './verdict-lines.js';
import { gpuRows } from './gpu-rows.js';
import { prepStagesLines } from './prep-stages-lines.js';
import { fetchPlace } from '../schema/profile-source.js';
import { networkLines } from './network-lines.js';
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
  const out = [...headerLines(profile, profilePath), '', ...measuredLines(profile)];
  if (profile.analysis) out.push('', ...analysisLines(profile, profile.analysis));
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

/** The job, where its profile went, its dataset, the network and the cost. */
function headerLines(profile: Profile, profilePath: string): string[] {
  const { dataset } = profile;
  const fits = dataset.fitsInMemory
    ? ''
    : dataset.remote
      ? " (does NOT fit in the profiler's cache)"
      : ' (does NOT fit in memory)';
  const throttle = profile.options.storageBwBytesPerSec
    ? `; cold ${fetchPlace(profile)} throttled to ${formatRate(profile.options.storageBwBytesPerSec)}`
    : '';
  return [
    `${oneLine(profile.jobName)}: ${profile.status} profile, saved to ${profilePath}`,
    `dataset: ${dataset.files} ${dataset.remote ? 'objects' : 'files'}, ${formatBytes(dataset.bytes)}${fits}${throttle}`,
    ...networkLines(profile),
    ...present([costLine(profile)]),
  ];
}

/** The modes as measured: their table, then the nodes', the ranks', the GPUs' and the overlap probe's. */
function measuredLines(profile: Profile): string[] {
  const out = [table(modeRows(profile), [1, 2, 3, 4, 5])];
  out.push(...present([...stalledLines(profile), allRanksLine(profile), firstBatchLine(profile)]));
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
  return out;
}

/** The split and its rates, then the verdict, the straggler, the advice and the caveats. */
function analysisLines(profile: Profile, analysis: Analysis): string[] {
  const place = fetchPlace(profile);
  const rate = (value: number | null, text: (v: number) => string) => (value !== null ? text(value) : null);
  const facts = present([
    rate(analysis.gpuSamplesPerSec, (v) => `accelerator could take ${v.toFixed(1)} samples/s`),
    rate(analysis.prepSamplesPerSec, (v) => `prep delivers ${v.toFixed(1)} samples/s`),
    rate(analysis.coldSamplesPerSec, (v) => `cold ${place} ${v.toFixed(1)} samples/s`),
  ]);
  const bandwidth = present([
    rate(analysis.storageReadBytesPerSec, (v) => `${place} read ${formatRate(v)}`),
    rate(analysis.memoryReadBytesPerSec, (v) => `memory read ${formatRate(v)}`),
    rate(analysis.prepCpuSecPerSample, (v) => `prep CPU ${(v * 1000).toFixed(2)} ms/sample`),
  ]);
  const out = [
    table(splitRows(profile), [1, 2]),
    ...present([stallPartsLine(profile), driftLine(profile), ...pipelineStallLines(profile)]),
    ...(facts.length ? [`rates: ${facts.join(' · ')}`] : []),
    ...(bandwidth.length ? [`measured: ${bandwidth.join(' · ')}`] : []),
    ...prepStagesLines(profile),
    '',
  ];
  for (const { label, text } of verdictLines(profile))
    out.push(...wrapLine(`verdict${label ? `, ${label}` : ''}:`, text, '  '));
  const straggler =
    analysis.straggler === null
      ? "none: no rank waits for its data beyond the other ranks' noise and 3% of the iteration"
      : analysis.straggler?.text;
  if (straggler !== undefined) out.push(...wrapLine('straggler:', straggler, '  '));
  out.push(...wrapLine('advice: ', analysis.advice, '  '));
  if (analysis.caveats.length) {
    out.push('caveats:');
    for (const caveat of analysis.caveats) out.push(...wrapLine('  -', caveat, '    '));
  }
  return out;
}

/** The lines that are there. */
function present(lines: readonly (string | null | undefined)[]): string[] {
  return lines.filter((line): line is string => Boolean(line));
}
