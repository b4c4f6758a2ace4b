/**
 * Chart.js configurations of the report, as plain JSON (no functions), so the same object draws the PNGs on the server
 * (charts.ts) and the live charts in the HTML page (html.ts). Units live in the axis titles.
 */
import type { Mode } from '../schema/events.js';
import type { ReportData } from './report-data.js';

/** One chart of the report. */
export interface ReportChart {
  /** File-name-safe id: 'breakdown'. */
  id: string;
  /** Heading above the chart. */
  title: string;
  /** One or two sentences on how to read it. */
  caption: string;
  /** Chart.js configuration (JSON-serialisable). */
  config: ChartJson;
}

/** A Chart.js config restricted to JSON values. */
export type ChartJson = {
  type: string;
  data: { labels?: string[]; datasets: Record<string, unknown>[] };
  options: Record<string, unknown>;
};

/** Tableau 10: distinguishable, and readable in greyscale order. */
const MODE_COLOR: Record<Mode, string> = { synthetic: '#4e79a7', cached: '#f28e2b', cold: '#e15759' };
const PART_COLOR = {
  compute: '#4e79a7',
  prep: '#f28e2b',
  fetch: '#e15759',
  checkpoint: '#76b7b2',
  boundary: '#b07aa1',
};
const WARMUP_COLOR = '#555555';

export const FONT = { family: "'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif", size: 13 };

function baseOptions(
  title: string,
  xTitle: string,
  yTitle: string,
  extra: { xType?: string; yType?: string; stacked?: boolean } = {},
) {
  const axis = (text: string, type: string | undefined) => ({
    // An explicit `type: undefined` would override Chart.js's category default.
    ...(type ? { type } : {}),
    ...(extra.stacked ? { stacked: true } : {}),
    title: { display: true, text, font: { ...FONT, weight: 'bold' } },
    ticks: { font: FONT },
    grid: { color: '#e5e5e5' },
  });
  return {
    animation: false,
    responsive: false,
    maintainAspectRatio: false,
    parsing: true,
    normalized: true,
    font: FONT,
    plugins: {
      title: { display: true, text: title, font: { ...FONT, size: 16, weight: 'bold' } },
      legend: { display: true, position: 'top', labels: { font: FONT } },
      tooltip: { enabled: true },
    },
    scales: { x: axis(xTitle, extra.xType), y: axis(yTitle, extra.yType) },
  };
}

/** CPU and disk read start at 0 so a dip is not drawn as a collapse. */
function withYFromZero<T extends { scales: { y: object } }>(options: T, fromZero: boolean): T {
  if (fromZero) options.scales.y = { ...options.scales.y, beginAtZero: true };
  return options;
}

const lineStyle = (color: string) => ({
  borderColor: color,
  backgroundColor: color,
  borderWidth: 1.5,
  pointRadius: 0,
  fill: false,
  spanGaps: false,
});

/** A bar chart of per-iteration times whose datasets stack. */
function stackedBars(
  title: string,
  xTitle: string,
  labels: string[],
  datasets: { label: string; data: (number | null)[]; backgroundColor: string | string[] }[],
) {
  return {
    type: 'bar',
    data: { labels, datasets },
    options: baseOptions(title, xTitle, 'time per iteration (ms)', { stacked: true }),
  };
}

/** The report's charts, in reading order. */
export function reportCharts(data: ReportData): ReportChart[] {
  return [
    breakdownChart(data.breakdown),
    ...(data.ranks ? [ranksChart(data.ranks)] : []),
    iterationsChart(data.iterations),
    ...resourceCharts(data),
    ...(data.whatIf.available ? whatifCharts(data.whatIf.curves) : []),
  ];
}

function breakdownChart(bars: ReportData['breakdown']): ReportChart {
  type Bar = ReportData['breakdown'][number];
  // The checkpoint and epoch-boundary parts only where the job reported them: a chart of a job that never saves keeps
  // its three parts.
  const parts: [string, (b: Bar) => number | null, string, boolean][] = [
    ['compute', (b) => b.computeMs, PART_COLOR.compute, true],
    ['prep stall', (b) => b.prepStallMs, PART_COLOR.prep, true],
    ['fetch stall', (b) => b.fetchStallMs, PART_COLOR.fetch, true],
    ['checkpoint stall', (b) => b.checkpointMs, PART_COLOR.checkpoint, false],
    ['epoch-boundary stall', (b) => b.boundaryMs, PART_COLOR.boundary, false],
  ];
  return {
    id: 'breakdown',
    title: 'Where each iteration goes',
    caption:
      'Per-iteration time of each mode split into compute, prep stall (CPU pre-processing not hidden by compute) ' +
      'and fetch stall (storage), by the differential method, and the checkpoint and epoch-boundary stalls ' +
      'where the job saved or started epochs (measured apart); cold is the real training pace.',
    config: stackedBars(
      'Per-iteration time by mode',
      'mode',
      bars.map((b) => b.mode),
      parts
        .filter(([, pick, , always]) => always || bars.some((b) => (pick(b) ?? 0) > 0))
        .map(([label, pick, backgroundColor]) => ({ label, data: bars.map(pick), backgroundColor })),
    ),
  };
}

function ranksChart({ mode, bars: ranks }: NonNullable<ReportData['ranks']>): ReportChart {
  return {
    id: 'ranks',
    title: 'Each rank: its wait for data and its step',
    caption:
      `Per-iteration wait for data and step of each rank in the ${mode} mode. Ranks that all-reduce run at one ` +
      `pace: ` +
      'a rank whose loader falls behind waits for its data, and the others wait for it inside their step (at ' +
      'the collective). The straggler, if any, is named in its label.',
    config: stackedBars(
      `Per-iteration time by rank (${mode})`,
      'rank',
      ranks.map((r) => r.label),
      [
        {
          label: 'step (compute, and waiting at the collective)',
          data: ranks.map((r) => r.stepMs),
          backgroundColor: PART_COLOR.compute,
        },
        {
          label: 'wait for data',
          data: ranks.map((r) => r.waitMs),
          backgroundColor: ranks.map((r) => (r.straggler ? PART_COLOR.fetch : PART_COLOR.prep)),
        },
      ],
    ),
  };
}

const xy = ([x, y]: [number, number | null]) => ({ x, y });

function iterationsChart(series: ReportData['iterations']): ReportChart {
  return {
    id: 'iterations',
    title: 'Iteration times',
    caption:
      'Every iteration of each mode (wait + compute; dots) and the mean of each block of consecutive iterations ' +
      'the confidence intervals are built from (lines). Crosses mark the warm-up iterations that were detected ' +
      'and discarded.',
    config: {
      type: 'line',
      data: {
        datasets: [
          ...series.map((s) => ({
            label: `${s.mode} (mean of each block)`,
            data: s.blockMeans.map(xy),
            ...lineStyle(MODE_COLOR[s.mode]),
            borderWidth: 3,
          })),
          ...series.map((s) => ({
            type: 'scatter',
            label: `${s.mode} (each iteration)`,
            data: s.points.map(xy),
            borderColor: MODE_COLOR[s.mode] + '66',
            backgroundColor: MODE_COLOR[s.mode] + '66',
            pointRadius: 1.8,
            showLine: false,
          })),
          {
            type: 'scatter',
            label: 'warm-up (discarded)',
            data: series.flatMap((s) => s.warmupPoints.map(xy)),
            borderColor: WARMUP_COLOR,
            backgroundColor: WARMUP_COLOR,
            pointStyle: 'crossRot',
            pointRadius: 6,
            borderWidth: 2,
            showLine: false,
          },
        ],
      },
      options: baseOptions('Per-iteration time series', 'iteration', 'iteration time (ms, log scale)', {
        xType: 'linear',
        yType: 'logarithmic',
      }),
    },
  };
}

/** CPU, disk reads and page cache against time, one line per mode. */
function resourceCharts(data: ReportData): ReportChart[] {
  const resourceChart = (
    id: string,
    title: string,
    yTitle: string,
    pick: (s: ReportData['resources'][number]) => [number, number | null][],
    caption: string,
  ): ReportChart => ({
    id,
    title,
    caption,
    config: {
      type: 'line',
      data: {
        datasets: data.resources.map((s) => ({
          label: s.mode,
          data: pick(s).map(xy),
          ...lineStyle(MODE_COLOR[s.mode]),
          pointRadius: 1.5,
        })),
      },
      options: withYFromZero(
        baseOptions(title, 'time since the mode started (s)', yTitle, { xType: 'linear' }),
        id !== 'page-cache',
      ),
    },
  });
  return [
    resourceChart(
      'cpu',
      'CPU utilisation',
      `CPU utilisation (%, 100 = all ${data.hostCpus} CPUs)`,
      (s) => s.cpuPct,
      'Whole-machine CPU utilisation while each mode ran.',
    ),
    resourceChart(
      'disk',
      'Disk reads',
      'disk read throughput (MB/s)',
      (s) => s.diskReadMBps,
      "Read throughput of the dataset's device: near zero in the cached mode, the storage pace in the cold mode.",
    ),
    resourceChart(
      'page-cache',
      'Page cache',
      'page cache size (MiB)',
      (s) => s.pageCacheMiB,
      'Size of the OS page cache (Cached in /proc/meminfo) while each mode ran.',
    ),
  ];
}

type WhatifCurves = Extract<ReportData['whatIf'], { available: true }>['curves'];

const markStyles = [
  { pointStyle: 'rectRot', color: '#000000' },
  { pointStyle: 'triangle', color: '#7f3c8d' },
];

/** The measured points on a what-if curve, each its own marker. */
const marks = (points: { label: string; x: number; samplesPerSec: number }[], scaleX: number) =>
  points.map((m, k) => ({
    type: 'scatter',
    label: m.label,
    data: [{ x: m.x / scaleX, y: m.samplesPerSec }],
    backgroundColor: markStyles[k % 2].color,
    borderColor: markStyles[k % 2].color,
    pointStyle: markStyles[k % 2].pointStyle,
    pointRadius: 8,
    showLine: false,
  }));

function whatifCharts(curves: WhatifCurves): ReportChart[] {
  return [
    whatifCacheChart(curves),
    countChart(
      'whatif-cpus',
      'What if: CPUs',
      `Predicted training throughput against the number of CPUs doing pre-processing (${curves.cpuScenario}).`,
      curves.cpus,
      curves.cpuMarks,
      '#4e79a7',
      'CPUs',
      'CPUs',
    ),
    ...(curves.workers.length > 0
      ? [
          countChart(
            'whatif-workers',
            'What if: loader workers',
            `Predicted training throughput against the DataLoader's num_workers per rank on this machine's CPUs ` +
              `(${curves.cpuScenario}), with the measured counts marked.`,
            curves.workers,
            curves.workersMarks,
            '#f28e2b',
            'loader workers',
            'num_workers per rank',
          ),
        ]
      : []),
  ];
}

function whatifCacheChart(curves: WhatifCurves): ReportChart {
  // Axis unit by magnitude, so a 17 MB dataset is not drawn as 0.016 GiB.
  const maxCache = Math.max(0, ...curves.cache.flatMap((c) => c.points.map((p) => p.x)));
  const [cacheUnit, GiB] = maxCache >= 2 ** 30 ? ['GiB', 2 ** 30] : ['MiB', 2 ** 20];
  const policyColor = { 'page-cache': '#e15759', minio: '#59a14f' } as const;
  return {
    id: 'whatif-cache',
    title: 'What if: cache size',
    caption:
      'Predicted steady-state training throughput (epoch 2 on) against the memory available for caching the ' +
      'dataset, for the OS page cache (LRU, reshuffled each epoch) and for an application cache that never ' +
      'evicts (MinIO, as in CoorDL).',
    config: {
      type: 'line',
      data: {
        datasets: [
          ...curves.cache.map((c) => ({
            label: c.label,
            data: c.points.map((p) => ({ x: p.x / GiB, y: p.samplesPerSec })),
            ...lineStyle(policyColor[c.policy]),
            borderWidth: 2,
          })),
          ...marks(curves.cacheMarks, GiB),
        ],
      },
      options: baseOptions('Throughput against cache size', `cache size (${cacheUnit})`, 'throughput (samples/s)', {
        xType: 'linear',
      }),
    },
  };
}

/** One predicted curve against a count (CPUs, workers), with the measured points marked. */
function countChart(
  id: string,
  title: string,
  caption: string,
  points: WhatifCurves['cpus'],
  measured: WhatifCurves['cpuMarks'],
  color: string,
  what: string,
  xLabel: string,
): ReportChart {
  return {
    id,
    title,
    caption,
    config: {
      type: 'line',
      data: {
        datasets: [
          {
            label: 'predicted',
            data: points.map((p) => ({ x: p.x, y: p.samplesPerSec })),
            ...lineStyle(color),
            borderWidth: 2,
            pointRadius: 3,
          },
          ...marks(measured, 1),
        ],
      },
      options: baseOptions(`Throughput against ${what}`, xLabel, 'throughput (samples/s)', { xType: 'linear' }),
    },
  };
}
