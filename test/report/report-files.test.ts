import { test } from 'node:test';
import { analyze } from '../../src/analysis/split.js';
import { summarizeIterations } from '../../src/analysis/summarize.js';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { run } from '../../src/cli/main.js';
import { ExitCode } from '../../src/errors.js';
import { readProfile } from '../../src/store/profile-store.js';
import { reportCharts } from '../../src/report/chart-configs.js';
import { reportData } from '../../src/report/report-data.js';
import { noWhatIf } from './no-whatif.js';
import { writeReport } from '../../src/report/write-report.js';
import { fakeIo } from '../cli/fake-io.js';
import { fixturePath } from '../gate/fixtures.js';
import { hasColour, inkStats } from './png.js';

const QUICK = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'dsa-report-'));

test('report writes HTML, Markdown and one non-blank PNG per chart', async () => {
  const io = fakeIo(dir);
  const code = await run(['report', QUICK, '--out-dir', 'out'], io);
  assert.equal(code, ExitCode.Ok, io.err);
  assert.match(io.out, /report: out\/emulated-quick\.html/);
  const ids = ['breakdown', 'iterations', 'cpu', 'disk', 'page-cache', 'whatif-cache', 'whatif-cpus'];
  for (const id of ids) {
    const png = readFileSync(join(dir, 'out', `emulated-quick-${id}.png`));
    const stats = await inkStats(png);
    assert.equal(stats.width, 1800, id);
    assert.ok(stats.ink > 0.02 && stats.ink < 0.6, `${id}: ink share ${stats.ink}`);
    assert.ok(stats.colours > 8, `${id}: ${stats.colours} colours`);
  }
  // Series colours of the stacked bar (compute, prep, fetch) are really drawn.
  const bar = readFileSync(join(dir, 'out', 'emulated-quick-breakdown.png'));
  for (const colour of ['#4e79a7', '#f28e2b', '#e15759']) assert.ok(await hasColour(bar, colour, 5000), colour);
  const md = readFileSync(join(dir, 'out', 'emulated-quick.md'), 'utf8');
  for (const id of ids) assert.match(md, new RegExp(`!\\[[^\\]]+\\]\\(emulated-quick-${id}\\.png\\)`));
  assert.match(md, /^\| compute \| 10\.5 ± 0\.1 \| 13% \|$/m);
});

test('every chart has a title, axis titles with units and a legend', () => {
  const charts = reportCharts(reportData(readProfile(QUICK), noWhatIf(readProfile(QUICK))));
  for (const chart of charts) {
    const options = chart.config.options as {
      plugins: { title: { text: string }; legend: { display: boolean } };
      scales: Record<string, { title: { text: string } }>;
    };
    assert.ok(options.plugins.title.text, chart.id);
    assert.equal(options.plugins.legend.display, true, chart.id);
    assert.match(options.scales.y.title.text, /\((ms|%|MB\/s|MiB|samples\/s)/, `${chart.id} y unit`);
    assert.ok(options.scales.x.title.text, `${chart.id} x title`);
  }
});

test("a multi-rank profile gets a chart of each rank's wait and step, the straggler named in its label", () => {
  const profile = readProfile(QUICK);
  assert.ok(
    !reportCharts(reportData(profile, noWhatIf(profile))).some((c) => c.id === 'ranks'),
    'one rank: no rank chart',
  );
  for (const mode of ['synthetic', 'cached', 'cold'] as const) {
    const m = profile.modes[mode]!;
    const slower = m.ranks[0].iterations.map((it) => ({ ...it, waitMs: it.waitMs + 20 }));
    m.ranks = [
      m.ranks[0],
      {
        ...m.ranks[0],
        rank: 1,
        pid: m.ranks[0].pid + 1,
        iterations: slower,
        summary: summarizeIterations(slower, { workers: m.ranks[0].workers }),
      },
    ];
  }
  profile.analysis = analyze(profile.modes);
  const chart = reportCharts(reportData(profile, noWhatIf(profile))).find((c) => c.id === 'ranks');
  assert.ok(chart, 'the rank chart');
  const data = chart.config.data as { labels: string[]; datasets: { data: number[] }[] };
  assert.deepEqual(data.labels, ['rank 0', 'rank 1 (straggler: prep)']);
  assert.ok(data.datasets[1].data[1] - data.datasets[1].data[0] > 15, 'rank 1 waits about 20 ms more');
});

test('without a what-if model the report says so instead of drawing curves', async () => {
  const out = join(dir, 'nowhatif');
  const written = await writeReport(readProfile(QUICK), QUICK, out, noWhatIf);
  assert.equal(written.pngs.length, 5);
  assert.match(readFileSync(written.html, 'utf8'), /what-if model not available/);
  assert.match(readFileSync(written.markdown, 'utf8'), /^> what-if model not available/m);
});

test('the HTML is self-contained: no network reference, a strict CSP, data as escaped JSON', () => {
  const html = readFileSync(join(dir, 'out', 'emulated-quick.html'), 'utf8');
  assert.match(
    html,
    /<meta http-equiv="Content-Security-Policy" content="default-src &#39;none&#39;; script-src &#39;sha256-/,
  );
  assert.doesNotMatch(html, /<(script|link|img|iframe)[^>]+(src|href)=/i);
  assert.doesNotMatch(
    html,
    /https?:\/\/(?!www\.chartjs\.org|github\.com)[a-z]/i,
    'no URL other than the licence banner',
  );
  const json = /<script type="application\/json" id="report-data">([^<]*)<\/script>/.exec(html);
  assert.ok(json, 'embedded data with no raw <');
  const data = JSON.parse(json![1]) as { charts: { id: string }[] };
  assert.deepEqual(data.charts.map((c) => c.id).slice(-3), ['whatif-cache', 'whatif-cpus', 'whatif-workers']);
  assert.equal(data.charts.length, 8);
});

test('a hostile profile: markup in the job name and reasons is escaped, huge numbers render', async () => {
  const written = await writeReport(
    readProfile(fixturePath('hostile')),
    fixturePath('hostile'),
    join(dir, 'hostile'),
    noWhatIf,
  );
  const html = readFileSync(written.html, 'utf8');
  assert.doesNotMatch(html, /<script>window\.pwned/);
  assert.doesNotMatch(html, /<img src=x/i);
  assert.doesNotMatch(html, /<svg/i);
  assert.match(
    html,
    /<h1>ds-analyzer report: &lt;\/script&gt;&lt;script&gt;window\.pwned=1&lt;\/script&gt;&lt;img src=x onerror=&quot;window\.pwned=2&quot;&gt;/,
  );
  // Exactly three script elements: the data, Chart.js, the page's own.
  assert.equal(html.match(/<script\b/g)!.length, 3);
  const md = readFileSync(written.markdown, 'utf8');
  assert.doesNotMatch(md, /<script|<img|<svg|[^\\]\]\(javascript:/i, 'no raw HTML, no live link');
  assert.match(md, /\\\[z\\\]\(javascript:/, 'the link text is escaped');
  for (const png of written.pngs) assert.ok((await inkStats(readFileSync(png))).ink > 0.01, png);
});

test('report on a corrupt profile is a one-line error with exit 7', async () => {
  const io = fakeIo(dir);
  assert.equal(await run(['report', fixturePath('missing-fields'), '--out-dir', 'x'], io), ExitCode.CorruptFile);
  assert.match(io.err, /^ds-analyzer: profile '.*missing-fields\.json' is malformed at 'host'/);
  assert.equal(io.err.trimEnd().split('\n').length, 1);
});
