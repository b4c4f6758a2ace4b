import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { activeFileBytes, cgroupMemoryLimits, jobMemoryBudget } from '../../../src/system/cgroups/memory-budget.js';

const GiB = 2 ** 30;
const MiB = 2 ** 20;
const V1_UNLIMITED = '9223372036854771712';

const V1_MOUNTINFO = [
  '31 23 0:28 / /sys/fs/cgroup rw,relatime - tmpfs tmpfs rw,mode=755',
  '35 31 0:32 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '34 31 0:31 / /sys/fs/cgroup/cpuset rw,relatime - cgroup cgroup rw,cpuset',
].join('\n');
const V2_MOUNTINFO = '30 23 0:26 / /sys/fs/cgroup rw,nosuid - cgroup2 cgroup2 rw,nsdelegate';

/** A fake kernel file system: a map of path -> text. */
function files(entries: Record<string, string>): (path: string) => string | null {
  return (path) => entries[path] ?? null;
}

function v1Group(dir: string, limit: number | string, usage: number, fileBytes: number): Record<string, string> {
  return {
    [`${dir}/memory.limit_in_bytes`]: `${limit}\n`,
    [`${dir}/memory.usage_in_bytes`]: `${usage}\n`,
    [`${dir}/memory.stat`]: `cache ${fileBytes}\nrss 0\ntotal_inactive_file ${fileBytes / 2}\ntotal_active_file ${fileBytes / 2}\n`,
  };
}

describe('memory budget', () => {
  test('cgroup v1: the limit minus what is in use besides reclaimable file pages, 90% of it, when tighter than MemAvailable', () => {
    const read = files({
      '/proc/self/cgroup': '5:cpuset:/\n4:memory:/jobs/a\n0::/\n',
      '/proc/self/mountinfo': V1_MOUNTINFO,
      ...v1Group('/sys/fs/cgroup/memory/jobs/a', 2 * GiB, 600 * MiB, 400 * MiB),
      ...v1Group('/sys/fs/cgroup/memory/jobs', V1_UNLIMITED, 900 * MiB, 0),
      ...v1Group('/sys/fs/cgroup/memory', V1_UNLIMITED, 5 * GiB, 0),
    });
    const budget = jobMemoryBudget(20 * GiB, read);
    assert.equal(budget.cgroup?.version, 'v1');
    assert.equal(budget.cgroup?.dir, '/sys/fs/cgroup/memory/jobs/a');
    assert.equal(budget.cgroup?.headroomBytes, 2 * GiB - 200 * MiB);
    assert.equal(budget.bytes, Math.floor((2 * GiB - 200 * MiB) * 0.9));
    assert.match(budget.source, /memory cgroup \/sys\/fs\/cgroup\/memory\/jobs\/a \(v1: limit 2\.00 GiB/);
  });

  test('cgroup v2: the lower of memory.max and memory.high, less memory.current plus file pages', () => {
    const dir = '/sys/fs/cgroup/user.slice/job';
    const read = files({
      '/proc/self/cgroup': '0::/user.slice/job\n',
      '/proc/self/mountinfo': V2_MOUNTINFO,
      [`${dir}/memory.max`]: 'max\n',
      [`${dir}/memory.high`]: `${3 * GiB}\n`,
      [`${dir}/memory.current`]: `${GiB}\n`,
      [`${dir}/memory.stat`]: `anon 100\nfile ${512 * MiB}\nkernel 5\n`,
      '/sys/fs/cgroup/user.slice/memory.max': 'max\n',
      '/sys/fs/cgroup/user.slice/memory.current': `${2 * GiB}\n`,
    });
    const budget = jobMemoryBudget(20 * GiB, read);
    assert.equal(budget.cgroup?.version, 'v2');
    assert.equal(budget.cgroup?.limitBytes, 3 * GiB);
    assert.equal(budget.cgroup?.headroomBytes, 3 * GiB - GiB + 512 * MiB);
    assert.equal(budget.bytes, Math.floor(2.5 * GiB * 0.9));
  });

  test('nested limits: the tightest ancestor wins, even above a looser group', () => {
    const read = files({
      '/proc/self/cgroup': '0::/outer/inner\n',
      '/proc/self/mountinfo': V2_MOUNTINFO,
      '/sys/fs/cgroup/outer/inner/memory.max': `${8 * GiB}\n`,
      '/sys/fs/cgroup/outer/inner/memory.current': `${GiB}\n`,
      '/sys/fs/cgroup/outer/memory.max': `${4 * GiB}\n`,
      '/sys/fs/cgroup/outer/memory.current': `${3 * GiB}\n`,
    });
    const limits = cgroupMemoryLimits(read);
    assert.deepEqual(
      limits.map((l) => l.dir),
      ['/sys/fs/cgroup/outer/inner', '/sys/fs/cgroup/outer'],
    );
    const budget = jobMemoryBudget(20 * GiB, read);
    assert.equal(budget.cgroup?.dir, '/sys/fs/cgroup/outer');
    assert.equal(budget.bytes, Math.floor(GiB * 0.9));
  });

  test('a container view: the group path below the mount root maps onto the mount point', () => {
    const read = files({
      '/proc/self/cgroup': '4:memory:/docker/abc\n',
      '/proc/self/mountinfo': '35 31 0:32 /docker/abc /sys/fs/cgroup/memory ro,relatime - cgroup cgroup rw,memory',
      ...v1Group('/sys/fs/cgroup/memory', GiB, 100 * MiB, 0),
    });
    assert.equal(jobMemoryBudget(null, read).cgroup?.dir, '/sys/fs/cgroup/memory');
    assert.equal(jobMemoryBudget(null, read).bytes, Math.floor((GiB - 100 * MiB) * 0.9));
  });

  test('no limit anywhere (v1 unlimited, v2 max, or no cgroup files): MemAvailable decides', () => {
    const v1 = files({
      '/proc/self/cgroup': '4:memory:/\n',
      '/proc/self/mountinfo': V1_MOUNTINFO,
      ...v1Group('/sys/fs/cgroup/memory', V1_UNLIMITED, GiB, 0),
    });
    const v2 = files({
      '/proc/self/cgroup': '0::/\n',
      '/proc/self/mountinfo': V2_MOUNTINFO,
      '/sys/fs/cgroup/memory.max': 'max\n',
      '/sys/fs/cgroup/memory.current': '5\n',
    });
    for (const read of [v1, v2, files({})]) {
      const budget = jobMemoryBudget(10 * GiB, read);
      assert.equal(budget.bytes, 10 * GiB);
      assert.equal(budget.cgroup, null);
      assert.match(budget.source, /MemAvailable/);
    }
    assert.equal(jobMemoryBudget(null, files({})).bytes, null);
  });

  test('a limited group looser than MemAvailable leaves MemAvailable in charge; a full group gives 0, not a negative budget', () => {
    const read = (usage: number) =>
      files({
        '/proc/self/cgroup': '4:memory:/a\n',
        '/proc/self/mountinfo': V1_MOUNTINFO,
        ...v1Group('/sys/fs/cgroup/memory/a', 64 * GiB, usage, 0),
      });
    assert.equal(jobMemoryBudget(8 * GiB, read(GiB)).bytes, 8 * GiB);
    assert.equal(jobMemoryBudget(8 * GiB, read(64 * GiB)).bytes, 0);
  });
});

test("the active file pages the dataset competes with: the limiting memory cgroup's, else the machine's", () => {
  const v1 = files({
    '/proc/self/cgroup': '4:memory:/jobs/a\n0::/\n',
    '/proc/self/mountinfo': V1_MOUNTINFO,
    ...v1Group('/sys/fs/cgroup/memory/jobs/a', 2 * GiB, 600 * MiB, 400 * MiB),
    '/proc/meminfo': 'MemTotal: 100 kB\nActive(file):    2048 kB\n',
  });
  assert.deepEqual(activeFileBytes(v1), {
    bytes: 200 * MiB,
    source: 'memory cgroup /sys/fs/cgroup/memory/jobs/a (v1) memory.stat total_active_file',
  });
  const machine = files({
    '/proc/self/cgroup': '0::/\n',
    '/proc/self/mountinfo': V2_MOUNTINFO,
    '/proc/meminfo': 'MemTotal: 100 kB\nActive(file):    2048 kB\nInactive(file): 1 kB\n',
  });
  assert.deepEqual(activeFileBytes(machine), { bytes: 2 * MiB, source: '/proc/meminfo Active(file)' });
  assert.equal(activeFileBytes(files({})), null);
});
