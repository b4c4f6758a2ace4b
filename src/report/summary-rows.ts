/**
 * The figures of a profile as rows of plain text, shared by the HTML and Markdown reports (each escapes them for its
 * own format).
 */
import { MODES } from '../schema/events.js';
import type { Estimate, Profile, StallCall } from '../schema/profile.js';
import { formatBytes, formatNumber, formatRate } from '../units.js';
import { formatEstimate, formatPercent } from './format.js';
import { allRanksSamplesPerSec } from '../analysis/mode-rates.js';
import { judgedRankWaits } from '../analysis/straggler.js';

/** Header + rows of the modes table. */
export function modeRows(profile: Profile): string[][] {
  const rate = maxRanks(profile) > 1 ? 'samples/s per rank' : 'samples/s';
  const rows = [
    ['mode', 'iteration ms (95% CI)', 'median ms', rate, 'measured iterations', 'warm-up', 'stopped by', 'cache state'],
  ];
  for (const mode of MODES) {
    const r = profile.modes[mode];
    if (!r) continue;
    const s = r.summary;
    rows.push([
      mode,
      s ? formatEstimate(s.iterMs) : '—',
      s ? formatNumber(s.medianIterMs) : '—',
      s ? formatNumber(s.samplesPerSec) : '—',
      String(s?.measuredIterations ?? 0),
      String(s?.warmupIterations ?? 0),
      (r.status === 'ok' || r.status === r.stopReason ? r.stopReason : `${r.status} (${r.stopReason})`) +
        (r.stalled ? ', STALLED' : ''),
      `${r.state.proven ? 'proven' : 'UNPROVEN'}: ${r.state.reason}`,
    ]);
  }
  return rows;
}

/** One line per stalled mode: why and when it stalled, and that its figures are left out (analysis/stalls.ts). */
export function stalledLines(profile: Profile): string[] {
  return MODES.flatMap((mode) => {
    const stalled = profile.modes[mode]?.stalled;
    return stalled ? [`${mode} STALLED: ${stalled.text}; its figures are left out of the split and the verdict`] : [];
  });
}

/** Most ranks any mode ran. */
function maxRanks(profile: Profile): number {
  return Math.max(0, ...MODES.map((mode) => profile.modes[mode]?.ranks.length ?? 0));
}

/**
 * Samples per second of all ranks of each mode together (each rank's own measured rate, summed), for a multi-rank job;
 * null for one rank.
 */
export function allRanksLine(profile: Profile): string | null {
  if (maxRanks(profile) < 2) return null;
  const parts = MODES.flatMap((mode) => {
    const m = profile.modes[mode];
    // Only where every rank has its own rate: a sum over some ranks is not the job's.
    if (!m || m.ranks.length === 0 || m.ranks.some((r) => r.summary === null)) return [];
    return [`${mode} ${formatNumber(allRanksSamplesPerSec(m)!)}`];
  });
  return parts.length
    ? `all ranks together, samples/s: ${parts.join(' · ')} (the slowest rank sets the pace of each)`
    : null;
}

/** Whether a mode's job timed iter(loader) (its epoch events): its first wait then starts there. */
function iterTimed(profile: Profile, mode: (typeof MODES)[number]): boolean {
  return profile.modes[mode]?.ranks.some((r) => r.epochs?.some((e) => e.epoch === 0)) ?? false;
}

/** Header + rows of the split table. */
export function splitRows(profile: Profile): string[][] {
  const a = profile.analysis;
  if (!a) return [];
  const computeShare = a.computeMs && a.iterMs && a.iterMs.mean > 0 ? a.computeMs.mean / a.iterMs.mean : null;
  // The stalls measured apart from the modes' paces, each a row where the job reported it.
  const apart = (name: string, stall: { ms: Estimate; call: StallCall; fraction: number | null } | null | undefined) =>
    stall ? [[name, formatEstimate(stall.ms), stallShare(stall.call, stall.fraction)]] : [];
  return [
    ['per iteration', 'ms (95% CI)', 'share of iteration'],
    ['compute', formatEstimate(a.computeMs), formatPercent(computeShare)],
    ['prep stall', formatEstimate(a.prepStallMs), stallShare(a.stallCalls?.prep, a.prepStallFraction)],
    ['fetch stall', formatEstimate(a.fetchStallMs), stallShare(a.stallCalls?.fetch, a.fetchStallFraction)],
    ...apart('checkpoint stall', a.checkpointStall),
    ...apart('epoch-boundary stall', a.boundaryStall),
    [
      profile.modes.cold?.summary && !profile.modes.cold.stalled ? 'total (cold)' : 'total (slowest mode measured)',
      formatEstimate(a.iterMs),
      a.iterMs ? '100%' : '—',
    ],
  ];
}

/**
 * How the checkpoint and boundary stalls were measured, one line each ('checkpoints: 24 saves (torch.save) in the cold
 * mode, ...'); empty when the job reported neither.
 */
export function pipelineStallLines(profile: Profile): string[] {
  const a = profile.analysis;
  if (!a) return [];
  return [
    a.checkpointStall ? `checkpoints: ${a.checkpointStall.text}` : null,
    a.boundaryStall ? `epoch boundaries: ${a.boundaryStall.text}` : null,
  ].filter((line): line is string => line !== null);
}

/** A named stall's share; 'within noise' for one whose interval does not clear the margin; contention said as such. */
function stallShare(call: StallCall | undefined, fraction: number | null): string {
  if (call === 'within-noise') return 'within noise';
  return call === 'contention'
    ? `${formatPercent(fraction)} (step slower, no longer wait: CPU contention)`
    : formatPercent(fraction);
}

/**
 * Each stall's wait growth and step growth, e.g. 'fetch stall = wait +45.2 ± 1.0, step +10.3 ± 1.4 ms'; null without
 * the parts.
 */
export function stallPartsLine(profile: Profile): string | null {
  const a = profile.analysis;
  if (!a) return null;
  const signed = (e: Estimate) => `${e.mean >= 0 ? '+' : ''}${formatEstimate(e)}`;
  const parts = [
    { name: 'prep', p: a.prepStallParts },
    { name: 'fetch', p: a.fetchStallParts },
  ].flatMap(({ name, p }) =>
    p ? [`${name} stall = wait ${signed(p.waitGrowthMs)}, step ${signed(p.stepGrowthMs)} ms`] : [],
  );
  return parts.length
    ? `stalls taken apart: ${parts.join(' · ')} (a step that grows is CPU contention with the loader, or a machine that changed pace)`
    : null;
}

/** How far the machine's pace moved between each mode's two runs; null for a single pass. */
export function driftLine(profile: Profile): string | null {
  const d = profile.analysis?.drift;
  if (!d) return null;
  const modes = d.modes.map((m) => `${m.mode} ${m.firstMs.toFixed(1)} → ${m.secondMs.toFixed(1)}`).join(', ');
  const fit = [
    d.slopePctPerMin !== null
      ? `steady drift ${d.slopePctPerMin >= 0 ? '+' : ''}${d.slopePctPerMin.toFixed(1)}%/min (cancelled by the mirrored order)`
      : null,
    d.runToRunPct !== null ? `run-to-run scatter ${d.runToRunPct.toFixed(1)}% (in the intervals)` : null,
  ].filter(Boolean);
  return `drift: ${modes} ms per iteration, first run → second${fit.length ? `; ${fit.join(', ')}` : ''}`;
}

/** Key facts as 'label: value' pairs. */
export function factRows(profile: Profile): [string, string][] {
  const a = profile.analysis;
  const facts: [string, string][] = [
    ['created', profile.createdAt],
    ['status', profile.status],
    [
      'host',
      `${profile.host.hostname}: ${profile.host.cpus} CPUs (${profile.host.cpuModel}), ${formatBytes(profile.host.memBytes)}${profile.host.gpus.length ? `, ${profile.host.gpus.length} GPU(s)` : ''}`,
    ],
    [
      'dataset',
      `${profile.dataset.files} files, ${formatBytes(profile.dataset.bytes)}${profile.dataset.fitsInMemory ? '' : ' (does not fit in memory)'}`,
    ],
    ['command', profile.command.join(' ')],
  ];
  if (profile.options.storageBwBytesPerSec)
    facts.push(['storage throttle', formatRate(profile.options.storageBwBytesPerSec)]);
  const perRank = maxRanks(profile) > 1 ? ' per rank' : '';
  if (a?.gpuSamplesPerSec != null)
    facts.push(['accelerator could take', `${formatNumber(a.gpuSamplesPerSec)} samples/s${perRank}`]);
  if (a?.prepSamplesPerSec != null)
    facts.push(['prep delivers', `${formatNumber(a.prepSamplesPerSec)} samples/s${perRank}`]);
  if (a?.coldSamplesPerSec != null)
    facts.push(['cold storage pace', `${formatNumber(a.coldSamplesPerSec)} samples/s${perRank}`]);
  const together = allRanksLine(profile);
  if (together) facts.push(['all ranks', together.replace(/^all ranks together, /, '')]);
  if (a?.storageReadBytesPerSec != null) facts.push(['storage read', formatRate(a.storageReadBytesPerSec)]);
  if (a?.prepCpuSecPerSample != null)
    facts.push(['prep CPU', `${formatNumber(a.prepCpuSecPerSample * 1000, 2)} ms/sample`]);
  return facts;
}

/**
 * Header + rows of the per-rank table of a multi-rank job, in the mode the straggler is judged in (the cold mode, else
 * the cached): each rank's iteration, its wait for data with its quantiles, and its step; null for one rank.
 */
export function rankRows(profile: Profile): { mode: 'cached' | 'cold'; rows: string[][] } | null {
  const judged = judgedRankWaits(profile.modes);
  if (!judged) return null;
  const { mode, waits } = judged;
  const straggler = profile.analysis?.straggler ?? null;
  const rows = [[`ranks (${mode})`, 'iteration ms', 'wait ms', 'wait p50 / p95 / p99 ms', 'step ms', '']];
  for (const r of waits) {
    const q = r.waitQuantilesMs;
    const where = r.node ? `${r.node.hostname}/${r.node.nodeRank}` : '';
    rows.push([
      `rank ${r.rank} ${where ? `(node ${where}, local ${r.localRank})` : `(local ${r.localRank})`}`,
      formatEstimate(r.iterMs),
      formatEstimate(r.waitMs),
      q ? `${q.p50.toFixed(1)} / ${q.p95.toFixed(1)} / ${q.p99.toFixed(1)}` : '—',
      formatEstimate(r.stepMs),
      straggler?.rank === r.rank ? `<- straggler (${straggler.cause})` : '',
    ]);
  }
  return { mode, rows };
}

/**
 * Header + rows of the per-node table of a profile over several nodes: each node's host and machine, the job's ranks it
 * ran, and where its own profile is; null for one node.
 */
export function nodeRows(profile: Profile): string[][] | null {
  const nodes = profile.nodes ?? [];
  if (nodes.length < 2) return null;
  const ranksOn = new Map<number, number[]>();
  for (const result of Object.values(profile.modes)) {
    for (const rank of result.ranks) {
      if (!rank.node) continue;
      const list = ranksOn.get(rank.node.nodeRank) ?? [];
      if (!list.includes(rank.rank)) list.push(rank.rank);
      ranksOn.set(rank.node.nodeRank, list);
    }
  }
  const rows = [['nodes', 'host', 'CPUs', 'memory', 'GPUs', 'ranks', 'its own profile']];
  for (const node of nodes) {
    rows.push([
      `node ${node.nodeRank}`,
      node.hostname,
      String(node.cpus),
      formatBytes(node.memBytes),
      String(node.gpus.length),
      (ranksOn.get(node.nodeRank) ?? []).sort((a, b) => a - b).join(', ') || '—',
      node.profile ?? '—',
    ]);
  }
  return rows;
}

/**
 * When the first batch came in the cached and cold modes: seconds after the job started, split into the job's start-up
 * and its loader's first wait; the cold wait beyond the cached one is the first batch's fetch. Null when neither mode
 * has one.
 */
export function firstBatchLine(profile: Profile): string | null {
  const parts: string[] = [];
  for (const mode of ['cached', 'cold'] as const) {
    const f = profile.modes[mode]?.firstBatch;
    if (f)
      parts.push(
        `${mode} ${f.sec.toFixed(2)} s (start-up ${f.startupSec.toFixed(2)} + loader's first wait ${f.firstWaitSec.toFixed(2)}${iterTimed(profile, mode) ? ', from iter(loader)' : ''})`,
      );
  }
  if (parts.length === 0) return null;
  const cached = profile.modes.cached?.firstBatch;
  const cold = profile.modes.cold?.firstBatch;
  const diff = cached && cold ? cold.firstWaitSec - cached.firstWaitSec : null;
  const fetch =
    diff !== null
      ? `; the loader's first wait, cold less cached (the first batch's fetch, one run's noise in it): ${diff >= 0 ? '+' : '-'}${Math.abs(diff).toFixed(2)} s`
      : '';
  return `first batch after the job started: ${parts.join(' · ')}${fetch}`;
}
