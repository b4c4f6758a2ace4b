import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { daemonsOf, fuseDaemons } from '../../../src/system/dataset/fuse-daemon.js';

test('the daemons of a mount are the /dev/fuse holders that name its mount point', () => {
  const proc = mkdtempSync(join(tmpdir(), 'dsa-fuse-proc-'));
  try {
    const fakeProcess = (pid: number, argv: string[], fds: Record<string, string>) => {
      mkdirSync(join(proc, String(pid), 'fd'), { recursive: true });
      writeFileSync(join(proc, String(pid), 'cmdline'), argv.join('\0') + '\0');
      for (const [fd, target] of Object.entries(fds)) symlinkSync(target, join(proc, String(pid), 'fd', fd));
    };
    fakeProcess(10, ['s3fs', 'bucket', '/mnt/a/', '-o', 'ro'], { '0': '/dev/null', '5': '/dev/fuse' });
    fakeProcess(11, ['/usr/bin/rclone', 'mount', 's3:data', '/mnt/b'], { '7': '/dev/fuse' });
    fakeProcess(12, ['python3', '/mnt/a/train.py'], { '3': '/mnt/a/x.jpg' });
    mkdirSync(join(proc, 'self'));
    const daemons = fuseDaemons(proc);
    assert.deepEqual(daemons.map((d) => d.pid).sort(), [10, 11], 'only processes holding /dev/fuse');
    assert.deepEqual(
      daemonsOf('/mnt/a', daemons).map((d) => d.pid),
      [10],
      'a trailing slash names the same mount',
    );
    assert.deepEqual(
      daemonsOf('/mnt/b', daemons).map((d) => d.pid),
      [11],
    );
    assert.deepEqual(daemonsOf('/mnt/c', daemons), []);
  } finally {
    rmSync(proc, { recursive: true, force: true });
  }
});
