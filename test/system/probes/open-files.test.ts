import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { OutsideReadsSampler, outsideReadsNote } from '../../../src/system/probes/open-files.js';

// A fake /proc: <pid>/fd/<n> links to real files, <pid>/fdinfo/<n> with the open flags.
describe('files read outside --data', () => {
  let dir: string;
  let proc: string;
  const real = (relative: string, bytes = 10): string => {
    const file = path.join(dir, relative);
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(file, Buffer.alloc(bytes));
    return file;
  };
  const openFd = (pid: number, fd: number, target: string, flags = '0100000'): void => {
    fs.mkdirSync(path.join(proc, String(pid), 'fd'), { recursive: true });
    fs.mkdirSync(path.join(proc, String(pid), 'fdinfo'), { recursive: true });
    fs.symlinkSync(target, path.join(proc, String(pid), 'fd', String(fd)));
    fs.writeFileSync(path.join(proc, String(pid), 'fdinfo', String(fd)), `pos:\t0\nflags:\t${flags}\nmnt_id:\t22\n`);
  };

  before(() => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'dsa-open-files-'));
    proc = path.join(dir, 'proc');
    openFd(100, 3, real('data/train/1.jpg'));
    openFd(100, 4, real('val/a.jpg', 100));
    openFd(100, 5, 'pipe:[1234]');
    openFd(101, 3, real('val/b.jpg', 50));
    openFd(101, 4, real('labels/train.csv'));
    openFd(101, 5, real('ckpt/model.pt'), '0100001'); // write-only: an output
    openFd(101, 6, real('venv/lib/python3.11/site-packages/torch/x.py'));
    openFd(101, 7, real('run/events/rank0.jsonl')); // the profiler's own
    openFd(101, 8, path.join(dir, 'gone.bin')); // vanished
  });
  after(() => fs.rmSync(dir, { recursive: true, force: true }));

  it('counts files opened for reading outside the roots by directory, and nothing of its own or the system', () => {
    const sampler = new OutsideReadsSampler([path.join(dir, 'data')], [path.join(dir, 'run')], proc);
    sampler.sample([100, 101, 999]);
    sampler.sample([100, 101]);
    const reads = sampler.result();
    assert.deepEqual(reads, {
      files: 3,
      dirs: [
        { dir: path.join(dir, 'val'), files: 2, bytes: 150 },
        { dir: path.join(dir, 'labels'), files: 1, bytes: 10 },
      ],
    });
    assert.equal(
      outsideReadsNote(reads, 1),
      `the job also read files outside --data: ${path.join(dir, 'val')} (2 files) and 1 more directory; their storage reads count as the dataset's, pass their folders to --data too if they are training input`,
    );
  });

  it('tells the files still open since a time from those only seen before it', () => {
    const sampler = new OutsideReadsSampler([path.join(dir, 'data')], [path.join(dir, 'run')], proc);
    sampler.sample([100, 101], 1_000); // start-up: both processes' files open
    sampler.sample([100], 5_000); // the measured window: only process 100's
    assert.deepEqual(sampler.result(5_000), { files: 1, dirs: [{ dir: path.join(dir, 'val'), files: 1, bytes: 100 }] });
    assert.equal(sampler.result().files, 3);
  });

  it('leaves out the files seen open only while the training loader was idle (a validation pass between epochs)', () => {
    const sampler = new OutsideReadsSampler([path.join(dir, 'data')], [path.join(dir, 'run')], proc);
    sampler.sample([100], 2_000); // validation between epochs: val/a.jpg open
    sampler.sample([101], 6_000); // training: val/b.jpg and the labels open
    const idle = [{ startMs: 1_500, endMs: 2_500 }];
    assert.deepEqual(sampler.result(0, idle), {
      files: 2,
      dirs: [
        { dir: path.join(dir, 'labels'), files: 1, bytes: 10 },
        { dir: path.join(dir, 'val'), files: 1, bytes: 50 },
      ],
    });
    assert.equal(sampler.result(0).files, 3, 'without the idle spans every file counts');
    assert.deepEqual(
      sampler.result(0, [], 4_000).dirs,
      [{ dir: path.join(dir, 'val'), files: 1, bytes: 100 }],
      'until',
    );
  });

  it('counts a file open across a short window (seen before and after it), and one a validation pass opened often', () => {
    const sampler = new OutsideReadsSampler([path.join(dir, 'data')], [path.join(dir, 'run')], proc);
    sampler.sample([100], 1_000);
    sampler.sample([100], 9_000);
    assert.equal(sampler.result(4_000, [], 6_000).files, 1, 'no sighting in the window: open throughout it');
    // Sighted only while the loader was idle, sample after sample, by two processes (each sample counts once).
    const often = new OutsideReadsSampler([path.join(dir, 'data')], [path.join(dir, 'run')], proc);
    for (let t = 0; t < 40 * 2_000; t += 2_000) often.sample([100, 100], t);
    assert.equal(often.result(0, [{ startMs: 0, endMs: 1e9 }]).files, 0, 'every sighting while idle');
  });

  it('says nothing when the job read only --data', () => {
    const sampler = new OutsideReadsSampler([dir], [], proc);
    sampler.sample([100, 101]);
    assert.equal(outsideReadsNote(sampler.result()), null);
  });
});
