import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createProgress } from '../../src/report/progress.js';
import type { DownloadProgress } from '../../src/profile/data-sources/source-run.js';

const at = (
  phase: DownloadProgress['phase'],
  bytesDone: number,
  elapsedSec: number,
  estimateSec: number | null = null,
) => ({
  source: 's3://data/train/ at http://127.0.0.1:9000',
  objects: 120,
  bytesTotal: 2e9,
  bytesDone,
  elapsedSec,
  estimateSec,
  phase,
});

test('a download says what it will fetch (with the estimate where a rate is known), then bytes, rate and time left, then what it took', () => {
  const lines: string[] = [];
  const progress = createProgress((text) => lines.push(text), false);
  progress.download(at('start', 0, 0, 40.2));
  progress.download(at('running', 5e8, 10));
  // Not a TTY: at most a line every few seconds.
  progress.download(at('running', 6e8, 11));
  progress.download(at('done', 2e9, 41));
  assert.deepEqual(lines, [
    'local copy: downloading 1.9 GiB (120 objects) from s3://data/train/ at http://127.0.0.1:9000, about 41 s at the rate measured\n',
    'local copy: 1.9 GiB (120 objects) downloaded in 41.0 s (48.8 MB/s)\n',
  ]);
  const tty: string[] = [];
  const live = createProgress((text) => tty.push(text), true);
  live.download(at('start', 0, 0));
  live.download(at('running', 5e8, 10));
  live.download(at('running', 6e8, 11));
  assert.equal(
    tty[0],
    'local copy: downloading 1.9 GiB (120 objects) from s3://data/train/ at http://127.0.0.1:9000\n',
  );
  assert.equal(tty[1], '\r\x1b[Kdownload  476.8 MiB/1.9 GiB  50.0 MB/s  ETA 30s');
  assert.equal(tty.length, 3, 'a TTY line is rewritten at each call');
});
