/**
 * What two profiles differ in besides their figures: the job's command, its data, the settings it was profiled with and
 * the machine. A comparison of two different jobs is not a regression check, so compare and gate say so (issue 42:
 * "compare says when two profiles are of different jobs or settings").
 */
import type { Profile } from '../schema/profile.js';
import { formatBytes } from '../units.js';

/** Each way profile B's job, data, settings or machine differs from A's, in words ("command: --lr 0.1 → --lr 0.2"); empty when they are alike. */
export function profileDifferences(a: Profile, b: Profile): string[] {
  const found: string[] = [];
  const command = commandChange(a.command, b.command);
  if (command) found.push(`command: ${command}`);
  const dataA = `${a.dataset.files} files, ${formatBytes(a.dataset.bytes)}`;
  const dataB = `${b.dataset.files} files, ${formatBytes(b.dataset.bytes)}`;
  if (a.dataset.files !== b.dataset.files || a.dataset.bytes !== b.dataset.bytes)
    found.push(`data: ${dataA} → ${dataB}`);
  for (const [name, pick] of SETTINGS) {
    const [va, vb] = [pick(a), pick(b)];
    if (va !== vb) found.push(`${name}: ${va} → ${vb}`);
  }
  return found;
}

/** The settings and machine facts compared, each as text. */
const SETTINGS: [string, (p: Profile) => string][] = [
  ['modes', (p) => p.options.modes.join(', ')],
  [
    'storage cap',
    (p) => (p.options.storageBwBytesPerSec ? `${formatBytes(p.options.storageBwBytesPerSec)}/s` : 'none'),
  ],
  ['remote data', (p) => p.options.remote?.url ?? 'none'],
  ['nodes', (p) => String(p.options.nodes?.count ?? 1)],
  ['machine CPUs', (p) => `${p.host.cpus} × ${p.host.cpuModel}`],
  ['machine memory', (p) => formatBytes(p.host.memBytes)],
  ['GPUs', (p) => (p.host.gpus.length ? p.host.gpus.map((g) => g.model).join(', ') : 'none')],
  ['ds-analyzer', (p) => p.tool.version],
];

/**
 * Where the commands part, as "A's → B's" with what both share at either end left out (and the flag before a changed
 * value kept: "--lr 0.1 → --lr 0.2"); null when the commands are the same.
 */
function commandChange(a: readonly string[], b: readonly string[]): string | null {
  let head = 0;
  while (head < a.length && head < b.length && a[head] === b[head]) head++;
  if (head === a.length && head === b.length) return null;
  let tail = 0;
  while (tail < a.length - head && tail < b.length - head && a[a.length - 1 - tail] === b[b.length - 1 - tail]) tail++;
  const from = head > 0 && a[head - 1].startsWith('-') ? head - 1 : head;
  const words = (args: readonly string[]) => {
    const part = args.slice(from, args.length - tail);
    return part.length ? shorten(part.join(' ')) : '(nothing)';
  };
  return `${words(a)} → ${words(b)}`;
}

function shorten(text: string): string {
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}
