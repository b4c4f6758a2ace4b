import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { probeCapabilities } from '../../../src/system/probes/capabilities.js';
import { CAPABILITY_NAMES } from '../../../src/system/probes/capability-text.js';
import { detectCgroups } from '../../../src/system/cgroups/cgroups.js';

const FAKE = fileURLToPath(new URL('../../../../test/fixtures/fake-nvidia-smi', import.meta.url));
chmodSync(FAKE, 0o755);

test('probeCapabilities reports every capability with detail, impact and fix', async () => {
  const rows = await probeCapabilities({
    nvidiaSmi: FAKE,
    pythons: ['/nonexistent/python3'],
    pythonTimeoutMs: 5000,
    cwd: process.cwd(),
  });
  assert.deepEqual(
    rows.map((r) => r.name),
    [...CAPABILITY_NAMES],
  );
  for (const row of rows) {
    assert.equal(typeof row.available, 'boolean');
    for (const text of [row.detail, row.impact, row.fix]) assert.ok(text.length > 0, `${row.name} has text`);
  }
  const byName = new Map(rows.map((r) => [r.name, r]));
  assert.equal(byName.get('root')!.available, process.getuid?.() === 0);
  assert.equal(byName.get('nvidia-smi')!.available, true);
  assert.equal(byName.get('python-torch')!.available, false);
  assert.match(byName.get('python-torch')!.detail, /not found/);
  // Unprivileged users can evict and check residency: this only needs koffi and libc.
  assert.equal(byName.get('page-cache-eviction')!.available, byName.get('residency')!.available);
  const io = detectCgroups().controllers.io;
  if (process.getuid?.() === 0 && io.writable) {
    assert.equal(byName.get('storage-throttle')!.available, true, byName.get('storage-throttle')!.detail);
  }
});

test('probeCapabilities without nvidia-smi', async () => {
  const rows = await probeCapabilities({
    nvidiaSmi: '/nonexistent/nvidia-smi',
    pythons: [],
    skipThrottleTest: true,
    cwd: process.cwd(),
  });
  const gpu = rows.find((r) => r.name === 'nvidia-smi')!;
  assert.equal(gpu.available, false);
  assert.match(gpu.detail, /not found/);
});

test("python-torch is the job's python3's: torch in another interpreter is named as the way, not counted as present", async (t) => {
  const { execa } = await import('execa');
  const torch = await execa('/usr/bin/python3', ['-c', 'import torch'], { reject: false });
  if (torch.failed) return t.skip('needs torch in /usr/bin/python3');
  const rows = await probeCapabilities({
    nvidiaSmi: FAKE,
    pythons: ['/nonexistent/python3', '/usr/bin/python3'],
    pythonTimeoutMs: 60_000,
    skipThrottleTest: true,
    cwd: process.cwd(),
  });
  const row = rows.find((r) => r.name === 'python-torch')!;
  assert.equal(row.available, false, row.detail);
  assert.match(
    row.detail,
    /a job run with \/nonexistent\/python3 gets no torch: run it with \/usr\/bin\/python3, or profile --python/,
  );
});
