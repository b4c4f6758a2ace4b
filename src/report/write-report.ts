/**
 * Writes the report of one profile into a folder: <name>.html (self-contained), <name>.md and one PNG per chart
 * (<name>-<chart>.png) beside it.
 */
import { mkdirSync } from 'node:fs';
import { basename, join } from 'node:path';
import type { Profile } from '../schema/profile.js';
import { writeAtomic } from '../store/write-atomic.js';
import { TOOL_VERSION } from '../version.js';
import { reportCharts } from './chart-configs.js';
import { fontsAvailable, renderChartPng } from './charts.js';
import { renderHtml } from './html.js';
import { renderMarkdown } from './markdown.js';
import { reportData } from './report-data.js';
import type { WhatIfSource } from './whatif-source.js';

/** What was written. */
export interface WrittenReport {
  /** Path of the self-contained HTML report. */
  html: string;
  /** Path of the Markdown report. */
  markdown: string;
  /** Paths of the PNG charts the Markdown report shows. */
  pngs: string[];
  /** Set when the what-if section has no curves, with the reason. */
  whatIfNote: string | null;
  /** True when this machine has no font to draw with (a bare container): the PNG charts have no text. */
  noFonts: boolean;
}

/** A file-name stem for a profile's report: the profile's own name, made safe. */
function reportStem(profilePath: string): string {
  return (
    basename(profilePath)
      .replace(/\.json$/i, '')
      .replace(/[^A-Za-z0-9_.-]+/g, '_')
      .replace(/^\.+/, '')
      .slice(0, 80) || 'report'
  );
}

/** Renders every chart and writes the HTML, Markdown and PNG files. */
export async function writeReport(
  profile: Profile,
  profilePath: string,
  outDir: string,
  whatIf: WhatIfSource,
): Promise<WrittenReport> {
  const noFonts = !(await fontsAvailable());
  const whatIfResult = await whatIf(profile);
  const charts = reportCharts(reportData(profile, whatIfResult));
  const whatIfNote = whatIfResult.available ? null : whatIfResult.reason;
  const whatIfNotes = whatIfResult.available ? whatIfResult.curves.notes : [];
  const stem = reportStem(profilePath);
  mkdirSync(outDir, { recursive: true });

  const pngFiles: Record<string, string> = {};
  const pngs: string[] = [];
  for (const chart of charts) {
    const name = `${stem}-${chart.id}.png`;
    writeAtomic(join(outDir, name), await renderChartPng(chart.config));
    pngFiles[chart.id] = name;
    pngs.push(join(outDir, name));
  }
  const html = join(outDir, `${stem}.html`);
  writeAtomic(html, renderHtml({ profile, profilePath, charts, whatIfNote, whatIfNotes, toolVersion: TOOL_VERSION }));
  const markdown = join(outDir, `${stem}.md`);
  writeAtomic(markdown, renderMarkdown({ profile, profilePath, charts, pngFiles, whatIfNote, whatIfNotes }));
  return { html, markdown, pngs, whatIfNote, noFonts };
}

/** What a reader of the written report should know: charts without text, what-if curves left out. One line each. */
export function reportNotes(written: Pick<WrittenReport, 'noFonts' | 'whatIfNote'>): string[] {
  return [
    ...(written.noFonts
      ? ['warning: no fonts found, PNG charts will have no text: install a font package (e.g. fonts-dejavu-core)']
      : []),
    ...(written.whatIfNote ? [`note: ${written.whatIfNote}`] : []),
  ];
}
