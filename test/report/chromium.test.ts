/**
 * Opens the HTML report in headless Chromium with the network unreachable
 * by construction (file://, CSP default-src 'none') and checks that every
 * chart drew, that a hostile job name stayed text, and that the page is not blank.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL, fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { readProfile } from '../../src/store/profile-store.js';
import { modelWhatIf } from '../../src/report/whatif-adapter.js';
import { noWhatIf } from './no-whatif.js';
import { writeReport } from '../../src/report/write-report.js';
import { fixturePath } from '../gate/fixtures.js';
import { hasColour, inkStats } from './png.js';

const CHROMIUM = '/usr/bin/chromium';
const QUICK = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));
const run = promisify(execFile);

async function chromium(args: string[], url: string): Promise<string> {
  const profileDir = mkdtempSync(join(tmpdir(), 'dsa-chromium-'));
  try {
    const { stdout } = await run(
      CHROMIUM,
      [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        '--hide-scrollbars',
        `--user-data-dir=${profileDir}`,
        ...args,
        url,
      ],
      { timeout: 30_000, maxBuffer: 64 * 2 ** 20 },
    );
    return stdout;
  } finally {
    rmSync(profileDir, { recursive: true, force: true });
  }
}

const dir = mkdtempSync(join(tmpdir(), 'dsa-html-'));

test('the HTML report draws every chart offline and is not blank', async (t) => {
  if (!existsSync(CHROMIUM)) return t.skip('needs chromium at /usr/bin/chromium (apt-get install -y chromium)');
  const written = await writeReport(readProfile(QUICK), QUICK, join(dir, 'quick'), modelWhatIf);
  const url = pathToFileURL(written.html).href;
  const dom = await chromium(['--dump-dom'], url);
  const body = /<body[^>]*>/.exec(dom)?.[0] ?? '';
  assert.match(body, /data-charts="ok"/, `charts drew: ${body}`);
  assert.match(body, /data-charts-drawn="8"/, 'seven charts and the loader workers chart');
  assert.doesNotMatch(dom, /<p class="note">This chart could not be drawn/);

  const shot = join(dir, 'quick.png');
  await chromium([`--screenshot=${shot}`, '--window-size=1200,2000'], url);
  const png = readFileSync(shot);
  const stats = await inkStats(png);
  assert.ok(stats.ink > 0.03, `screenshot has content: ${stats.ink}`);
  // The stacked bar's colours are on screen: Chart.js drew in the page, not just the tables.
  for (const colour of ['#4e79a7', '#f28e2b', '#e15759']) assert.ok(await hasColour(png, colour, 2000), colour);
});

test('a hostile profile renders as text: no injected element, no injected script ran', async (t) => {
  if (!existsSync(CHROMIUM)) return t.skip('needs chromium at /usr/bin/chromium (apt-get install -y chromium)');
  const written = await writeReport(
    readProfile(fixturePath('hostile')),
    fixturePath('hostile'),
    join(dir, 'hostile'),
    noWhatIf,
  );
  const dom = await chromium(['--dump-dom'], pathToFileURL(written.html).href);
  assert.match(/<body[^>]*>/.exec(dom)![0], /data-charts="ok"/);
  assert.doesNotMatch(dom, /<img[^>]*src="x"/i);
  assert.doesNotMatch(dom, /<svg/i);
  assert.doesNotMatch(dom, /<script>window\.pwned/);
  assert.match(dom, /<h1>ds-analyzer report: &lt;\/script&gt;&lt;script&gt;window\.pwned=1/);
});
