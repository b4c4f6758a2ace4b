import assert from 'node:assert/strict';
import { chmodSync } from 'node:fs';
import os from 'node:os';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { ProfileSchema } from '../../../src/schema/profile.js';
import { hostFacts } from '../../../src/system/probes/host.js';

const FAKE = fileURLToPath(new URL('../../../../test/fixtures/fake-nvidia-smi', import.meta.url));
chmodSync(FAKE, 0o755);

// How long hostFacts takes is not asserted (no timing in tests): each probe is time-boxed in host.ts.
test('hostFacts matches the profile host block', async () => {
  const host = await hostFacts({ nvidiaSmi: '/nonexistent/nvidia-smi' });
  ProfileSchema.shape.host.parse(host);
  assert.equal(host.root, process.getuid?.() === 0);
  assert.equal(
    host.hostname,
    os.hostname(),
    "the name a rank falls back to (runMode's processNode), so nodes[] and ranks[].node agree",
  );
  assert.ok(['v1', 'v2', 'none'].includes(host.cgroup));
  assert.ok(host.cpus >= 1);
  assert.ok(host.memBytes > 0);
  assert.ok(host.kernel.length > 0 && host.cpuModel.length > 0 && host.os.length > 0);
  assert.deepEqual(host.gpus, []);
});

test('hostFacts lists GPUs from nvidia-smi', async () => {
  const host = await hostFacts({ nvidiaSmi: FAKE });
  assert.equal(host.gpus.length, 3);
  assert.equal(host.gpus[0].model, 'NVIDIA A100-SXM4-40GB');
});
