/**
 * A reporter for node's test runner (a second one beside TAP, run-tests.ts):
 * at the end of a run, the ten test files that took longest, by the sum of
 * their top-level tests' durations, so a developer sees where the suite's
 * time goes. With DSA_SLOWEST_FILE set, it appends every file's time there
 * instead ("ms<TAB>path" lines), and run-tests.ts prints the ten slowest of
 * all its runs at the end.
 */
import { appendFileSync } from 'node:fs';

interface TestEvent {
  type: string;
  data: { file?: string; nesting?: number; details?: { duration_ms?: number } };
}

const SHOWN = 10;

export default async function* slowestFiles(source: AsyncIterable<TestEvent>): AsyncGenerator<string> {
  const msByFile = new Map<string, number>();
  for await (const event of source) {
    if (event.type !== 'test:pass' && event.type !== 'test:fail') continue;
    const { file, nesting, details } = event.data;
    if (file === undefined || nesting !== 0) continue;
    msByFile.set(file, (msByFile.get(file) ?? 0) + (details?.duration_ms ?? 0));
  }
  const recordTo = process.env.DSA_SLOWEST_FILE;
  if (recordTo) {
    appendFileSync(recordTo, [...msByFile].map(([file, ms]) => `${ms}\t${file}\n`).join(''));
    return;
  }
  yield* slowestLines(msByFile);
}

/** The ten slowest of `msByFile` as comment lines, or nothing when it is empty. */
export function* slowestLines(msByFile: Map<string, number>): Generator<string> {
  const slowest = [...msByFile].sort((a, b) => b[1] - a[1]).slice(0, SHOWN);
  if (slowest.length === 0) return;
  yield `# the ${slowest.length} slowest test files (their tests' time, s):\n`;
  const root = process.cwd();
  for (const [file, ms] of slowest)
    yield `#   ${(ms / 1000).toFixed(1).padStart(7)}  ${file.replace(`${root}/`, '')}\n`;
}
