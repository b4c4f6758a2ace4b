/**
 * The self-contained HTML report (one file, like clinic's): Chart.js inlined from node_modules, the chart data embedded
 * as JSON in a non-executed <script type="application/json">, every profile string escaped, and a
 * Content-Security-Policy that allows no network at all and only the page's own scripts (by hash).
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { createRequire } from 'node:module';
import type { Profile } from '../schema/profile.js';
import type { ReportChart } from './chart-configs.js';
import { escapeHtml, jsonForScript } from './escape.js';
import { capitalised, verdictLines } from './verdict-lines.js';
import { gpuRows } from './gpu-rows.js';
import {
  driftLine,
  factRows,
  modeRows,
  nodeRows,
  splitRows,
  pipelineStallLines,
  stallPartsLine,
} from './summary-rows.js';

const require = createRequire(import.meta.url);

let chartJsSource: string | null = null;

/** The Chart.js UMD bundle, read once from the installed package. */
function chartJsBundle(): string {
  if (chartJsSource === null) {
    // The package's exports map hides dist/chart.umd.js; its CommonJS entry sits beside it.
    chartJsSource = readFileSync(join(dirname(require.resolve('chart.js')), 'chart.umd.js'), 'utf8');
    // Inline scripts end at the first '</script'; the bundle has none today, and must not.
    if (/<\/script/i.test(chartJsSource)) chartJsSource = chartJsSource.replace(/<\/script/gi, '<\\/script');
  }
  return chartJsSource;
}

/** Draws every chart from the embedded JSON; marks the body when done so tests and people can tell. */
const BOOT_SCRIPT = `
(function () {
  var body = document.body;
  var payload = JSON.parse(document.getElementById('report-data').textContent);
  var white = {
    id: 'whiteBackground',
    beforeDraw: function (chart) {
      var ctx = chart.ctx;
      ctx.save();
      ctx.globalCompositeOperation = 'destination-over';
      ctx.fillStyle = '#ffffff';
      ctx.fillRect(0, 0, chart.width, chart.height);
      ctx.restore();
    }
  };
  var drawn = 0;
  var failed = [];
  if (typeof Chart === 'undefined') {
    body.setAttribute('data-charts', 'failed');
    return;
  }
  payload.charts.forEach(function (item) {
    var canvas = document.getElementById('chart-' + item.id);
    try {
      var config = item.config;
      config.options.devicePixelRatio = window.devicePixelRatio || 1;
      config.plugins = [white];
      new Chart(canvas, config);
      drawn++;
    } catch (error) {
      failed.push(item.id);
      var note = document.createElement('p');
      note.className = 'note';
      note.textContent = 'This chart could not be drawn: ' + (error && error.message);
      canvas.parentNode.insertBefore(note, canvas.nextSibling);
    }
  });
  body.setAttribute('data-charts-drawn', String(drawn));
  body.setAttribute('data-charts', failed.length ? 'failed' : 'ok');
})();
`;

const STYLE = `
body { font-family: 'DejaVu Sans', 'Liberation Sans', Arial, Helvetica, sans-serif; color: #222; margin: 0 auto; max-width: 1000px; padding: 1.5rem; line-height: 1.45; }
h1 { font-size: 1.6rem; margin-bottom: 0.2rem; overflow-wrap: anywhere; }
h2 { font-size: 1.2rem; margin-top: 2rem; border-bottom: 1px solid #ddd; padding-bottom: 0.2rem; }
table { border-collapse: collapse; margin: 0.6rem 0; font-size: 0.92rem; }
th, td { border: 1px solid #ddd; padding: 0.25rem 0.6rem; text-align: left; vertical-align: top; overflow-wrap: break-word; }
th { background: #f4f4f4; }
td.num { text-align: right; white-space: nowrap; font-variant-numeric: tabular-nums; }
.verdict { font-size: 1.1rem; font-weight: bold; }
.note { color: #7a4b00; background: #fff6e0; padding: 0.5rem 0.8rem; border-left: 4px solid #f2b600; }
figure { margin: 1rem 0 2rem; }
canvas { max-width: 100%; height: auto; border: 1px solid #eee; }
figcaption { color: #555; font-size: 0.9rem; }
footer { color: #777; font-size: 0.8rem; margin-top: 3rem; }
`;

/** Everything the HTML page shows besides the profile's own figures. */
export interface HtmlReportInput {
  profile: Profile;
  /** Where the profile was read from (shown, escaped). */
  profilePath: string;
  /** Charts with their Chart.js configs. */
  charts: ReportChart[];
  /** Shown in the what-if section when the model is not available. */
  whatIfNote: string | null;
  /** Notes of the what-if model (assumptions), shown under its charts. */
  whatIfNotes: string[];
  /** Tool version for the footer. */
  toolVersion: string;
}

/** Renders the HTML report. */
export function renderHtml(input: HtmlReportInput): string {
  const { profile, charts } = input;
  const dataJson = jsonForScript({ charts: charts.map((c) => ({ id: c.id, config: c.config })) });
  const chartJs = chartJsBundle();
  const mainCharts = charts.filter((c) => !c.id.startsWith('whatif-'));
  const whatIfCharts = charts.filter((c) => c.id.startsWith('whatif-'));
  const gpus = gpuRows(profile);

  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${escapeHtml(contentSecurityPolicy(chartJs))}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>ds-analyzer report: ${escapeHtml(profile.jobName)}</title>
<style>${STYLE}</style>
</head>
<body data-charts="pending">
<header>
<h1>ds-analyzer report: ${escapeHtml(profile.jobName)}</h1>
<p>Profile <code>${escapeHtml(input.profilePath)}</code></p>
</header>
<main>
<h2>Verdict</h2>
${verdictHtml(profile)}
<h2>Modes</h2>
${htmlTable(modeRows(profile), [1, 2, 3, 4])}
<p>Figures marked ~ rest on a mode whose cache state was not proven.</p>
${nodeRows(profile) ? `<h2>Nodes</h2>\n${htmlTable(nodeRows(profile)!, [2, 4])}` : ''}
${gpus ? `<h2>GPUs</h2>\n${htmlTable(gpus)}` : ''}
<h2>Charts</h2>
${mainCharts.map(chartFigure).join('\n')}
<h2>What if</h2>
${input.whatIfNote ? `<p class="note">${escapeHtml(input.whatIfNote)}</p>` : ''}
${whatIfCharts.map(chartFigure).join('\n')}
${input.whatIfNotes.length ? htmlList(input.whatIfNotes) : ''}
<h2>Run</h2>
<table>${factRows(profile)
    .map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${escapeHtml(v)}</td></tr>`)
    .join('')}</table>
</main>
<footer>Made by ds-analyzer ${escapeHtml(input.toolVersion)}. This file is self-contained: it loads nothing from the network.</footer>
<script type="application/json" id="report-data">${dataJson}</script>
<script>${chartJs}</script>
<script>${BOOT_SCRIPT}</script>
</body>
</html>
`;
}

/** Nothing loads but the page's own scripts and style, each pinned by its hash. */
function contentSecurityPolicy(chartJs: string): string {
  return [
    "default-src 'none'",
    `script-src ${sha256(chartJs)} ${sha256(BOOT_SCRIPT)}`,
    `style-src ${sha256(STYLE)}`,
    'img-src data:',
    "base-uri 'none'",
    "form-action 'none'",
  ].join('; ');
}

/** The verdict and advice, the caveats and warnings, the split table and the stall lines. */
function verdictHtml(profile: Profile): string {
  const a = profile.analysis;
  return `${
    a
      ? `${verdictLines(profile)
          .map(
            ({ label, text }) =>
              `<p class="verdict">${label ? `${capitalised(label)}: ` : ''}${escapeHtml(text)}</p>\n`,
          )
          .join('')}<p>${escapeHtml(a.advice)}</p>`
      : '<p class="note">No mode finished: this profile has no analysis.</p>'
  }
${a?.caveats.length ? htmlList(a.caveats, 'note') : ''}
${profile.warnings.length ? htmlList(profile.warnings, 'note') : ''}
${htmlTable(splitRows(profile), [1, 2])}
${[stallPartsLine(profile), driftLine(profile), ...pipelineStallLines(profile)]
  .filter((l): l is string => l !== null)
  .map((l) => `<p>${escapeHtml(l)}</p>`)
  .join('\n')}`;
}

function chartFigure(chart: ReportChart): string {
  return `
<figure>
<h3>${escapeHtml(chart.title)}</h3>
<canvas id="chart-${escapeHtml(chart.id)}" width="900" height="450" role="img" aria-label="${escapeHtml(chart.title)}"></canvas>
<figcaption>${escapeHtml(chart.caption)}</figcaption>
</figure>`;
}

function htmlList(items: string[], className?: string): string {
  return `<ul${className ? ` class="${className}"` : ''}>${items.map((i) => `<li>${escapeHtml(i)}</li>`).join('')}</ul>`;
}

function htmlTable(rows: string[][], numeric: number[] = []): string {
  if (rows.length === 0) return '';
  const [head, ...body] = rows;
  return `<table>
<thead><tr>${head.map((h) => `<th>${escapeHtml(h)}</th>`).join('')}</tr></thead>
<tbody>${body.map((r) => `<tr>${r.map((c, i) => `<td${numeric.includes(i) ? ' class="num"' : ''}>${escapeHtml(c)}</td>`).join('')}</tr>`).join('\n')}</tbody>
</table>`;
}

function sha256(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}
