import { MODES } from '../schema/events.js';
import type { Profile } from '../schema/profile.js';
import { formatBytes, formatRate } from '../units.js';
import { formatEstimate, formatPercent, table } from './format.js';

/** The summary a person reads after `ds-analyzer profile`: modes, split, verdict, advice, caveats. */
export function renderSummary(profile: Profile, profilePath: string): string {
  const out: string[] = [];
  const { dataset, analysis } = profile;
  out.push(`${profile.jobName}: ${profile.status} profile, saved to ${profilePath}`);
  out.push(
    `dataset: ${dataset.files} files, ${formatBytes(dataset.bytes)}` +
      (dataset.fitsInMemory ? '' : ' (does NOT fit in memory)') +
      (profile.options.storageBwBytesPerSec ? `; cold storage throttled to ${formatRate(profile.options.storageBwBytesPerSec)}` : ''),
  );
  out.push('');

  const modeRows = [['mode', 'iter ms (95% CI)', 'median ms', 'samples/s', 'iters', 'warm-up', 'stop', 'state']];
  for (const mode of MODES) {
    const result = profile.modes[mode];
    if (!result) continue;
    const s = result.summary;
    modeRows.push([
      mode,
      s ? formatEstimate(s.iterMs) : '—',
      s ? s.medianIterMs.toFixed(1) : '—',
      s ? s.samplesPerSec.toFixed(1) : '—',
      String(s?.measuredIterations ?? 0),
      String(s?.warmupIterations ?? 0),
      result.status === 'ok' ? result.stopReason : `${result.status} (${result.stopReason})`,
      `${result.state.proven ? 'proven' : 'UNPROVEN'}: ${result.state.reason}`,
    ]);
  }
  out.push(table(modeRows, [1, 2, 3, 4, 5]));

  if (analysis) {
    out.push('');
    const splitRows = [
      ['per iteration', 'ms (95% CI)', 'share'],
      ['compute', formatEstimate(analysis.computeMs), formatPercent(shareOf(analysis.computeMs?.mean, analysis.iterMs?.mean))],
      ['prep stall', formatEstimate(analysis.prepStallMs), formatPercent(analysis.prepStallFraction)],
      ['fetch stall', formatEstimate(analysis.fetchStallMs), formatPercent(analysis.fetchStallFraction)],
      ['total', formatEstimate(analysis.iterMs), analysis.iterMs ? '100%' : '—'],
    ];
    out.push(table(splitRows, [1, 2]));
    const facts = [
      analysis.gpuSamplesPerSec !== null ? `accelerator could take ${analysis.gpuSamplesPerSec.toFixed(1)} samples/s` : null,
      analysis.prepSamplesPerSec !== null ? `prep delivers ${analysis.prepSamplesPerSec.toFixed(1)} samples/s` : null,
      analysis.coldSamplesPerSec !== null ? `cold storage ${analysis.coldSamplesPerSec.toFixed(1)} samples/s` : null,
    ].filter(Boolean);
    if (facts.length) out.push(`rates: ${facts.join(' · ')}`);
    const bandwidth = [
      analysis.storageReadBytesPerSec !== null ? `storage read ${formatRate(analysis.storageReadBytesPerSec)}` : null,
      analysis.memoryReadBytesPerSec !== null ? `memory read ${formatRate(analysis.memoryReadBytesPerSec)}` : null,
      analysis.prepCpuSecPerSample !== null ? `prep CPU ${(analysis.prepCpuSecPerSample * 1000).toFixed(2)} ms/sample` : null,
    ].filter(Boolean);
    if (bandwidth.length) out.push(`measured: ${bandwidth.join(' · ')}`);
    out.push('');
    out.push(`verdict: ${analysis.verdict.text}`);
    out.push(`advice:  ${analysis.advice}`);
    if (analysis.caveats.length) {
      out.push('caveats:');
      for (const caveat of analysis.caveats) out.push(`  - ${caveat}`);
    }
  }
  for (const warning of profile.warnings) out.push(`warning: ${warning}`);
  return out.join('\n') + '\n';
}

function shareOf(part: number | undefined, whole: number | undefined): number | null {
  return part === undefined || whole === undefined || whole <= 0 ? null : part / whole;
}
