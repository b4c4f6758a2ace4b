/**
 * The Markdown report: the same figures as the HTML page, with the charts as PNG files beside it (for pull requests,
 * wikis and GitHub step summaries).
 */
import type { ReportChart } from './chart-configs.js';
import type { HtmlReportInput } from './html.js';
import { mdText } from './escape.js';
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

/** Input of the Markdown report: the HTML page's, with `pngFiles` mapping chart id to a path relative to the .md file. */
export type MarkdownReportInput = Omit<HtmlReportInput, 'toolVersion'> & { pngFiles: Record<string, string> };

/** Renders the Markdown report. */
export function renderMarkdown(input: MarkdownReportInput): string {
  const { profile } = input;
  const a = profile.analysis;
  const out: string[] = [`# ds-analyzer report: ${mdText(profile.jobName)}`, ''];
  out.push(`Profile: ${mdText(input.profilePath)}`, '');
  out.push('## Verdict', '');
  if (a) {
    for (const { label, text } of verdictLines(profile))
      out.push(`**${label ? `${capitalised(label)}: ` : ''}${mdText(text)}**`, '');
    out.push(mdText(a.advice), '');
    for (const caveat of a.caveats) out.push(`- caveat: ${mdText(caveat)}`);
    if (a.caveats.length) out.push('');
  } else {
    out.push('No mode finished: this profile has no analysis.', '');
  }
  for (const warning of profile.warnings) out.push(`- warning: ${mdText(warning)}`);
  if (profile.warnings.length) out.push('');
  out.push(mdTable(splitRows(profile)), '');
  for (const line of [stallPartsLine(profile), driftLine(profile), ...pipelineStallLines(profile)])
    if (line) out.push(mdText(line), '');
  out.push('## Modes', '', mdTable(modeRows(profile)), '');
  const nodes = nodeRows(profile);
  if (nodes) out.push('## Nodes', '', mdTable(nodes), '');
  const gpus = gpuRows(profile);
  if (gpus) out.push('## GPUs', '', mdTable(gpus), '');
  out.push('Figures marked ~ rest on a mode whose cache state was not proven.', '', '## Charts', '');
  const chart = (c: ReportChart) => {
    const file = input.pngFiles[c.id];
    if (file)
      out.push(`### ${mdText(c.title)}`, '', `![${mdText(c.title)}](${encodeURI(file)})`, '', mdText(c.caption), '');
  };
  input.charts.filter((c) => !c.id.startsWith('whatif-')).forEach(chart);
  out.push('## What if', '');
  if (input.whatIfNote) out.push(`> ${mdText(input.whatIfNote)}`, '');
  input.charts.filter((c) => c.id.startsWith('whatif-')).forEach(chart);
  for (const note of input.whatIfNotes) out.push(`- ${mdText(note)}`);
  if (input.whatIfNotes.length) out.push('');
  out.push('## Run', '', '| | |', '| --- | --- |');
  for (const [k, v] of factRows(profile)) out.push(`| ${mdText(k)} | ${mdText(v)} |`);
  return out.join('\n') + '\n';
}

function mdTable(rows: string[][]): string {
  if (rows.length === 0) return '';
  const [head, ...body] = rows;
  return [
    `| ${head.map(mdText).join(' | ')} |`,
    `| ${head.map(() => '---').join(' | ')} |`,
    ...body.map((r) => `| ${r.map(mdText).join(' | ')} |`),
  ].join('\n');
}
