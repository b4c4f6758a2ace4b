/**
 * The history gate's series as a PNG (the report's Chart.js on
 * @napi-rs/canvas, charts.ts): the cold iteration time per sample of each
 * profile, the median of each segment between steps as a stepped line, and the profile at which each step began marked
 * with a triangle.
 */
import { median } from '../analysis/stats.js';
import type { HistoryVerdict } from '../gate/history.js';
import { FONT, type ChartJson } from './chart-configs.js';
import { renderChartPng } from './charts.js';

/** The chart's configuration: one point a profile, labelled by its recorded time. */
export function historyChartConfig(verdict: HistoryVerdict): ChartJson {
  const { points } = verdict;
  const iteration = verdict.series[0];
  const bounds = [0, ...iteration.changes.map((c) => c.index), points.length];
  const medians = points.map((_, i) => {
    const segment = bounds.findIndex((b, k) => i >= b && i < bounds[k + 1]);
    return median(iteration.values.slice(bounds[segment], bounds[segment + 1]));
  });
  const steps = points.map((_, i) => (iteration.changes.some((c) => c.index === i) ? iteration.values[i] : null));
  const axis = (text: string) => ({ title: { display: true, text, font: { ...FONT, weight: 'bold' } } });
  return {
    type: 'line',
    data: {
      labels: points.map((p) => p.createdAt.slice(0, 16).replace('T', ' ')),
      datasets: [
        { label: 'iteration time per sample', data: iteration.values, borderColor: '#4e79a7', pointRadius: 3 },
        { label: 'median between steps', data: medians, borderColor: '#999999', stepped: 'middle', pointRadius: 0 },
        {
          label: 'step began',
          data: steps,
          showLine: false,
          pointStyle: 'triangle',
          pointRadius: 9,
          backgroundColor: '#e15759',
          borderColor: '#e15759',
        },
      ],
    },
    options: {
      plugins: {
        title: { display: true, text: 'Cold iteration time per sample over the history', font: FONT },
        legend: { labels: { font: FONT } },
      },
      scales: { x: axis('profile (recorded time, UTC)'), y: axis('ms per sample') },
    },
  };
}

/** The chart as PNG bytes. */
export function historyChartPng(verdict: HistoryVerdict): Promise<Buffer> {
  return renderChartPng(historyChartConfig(verdict));
}
