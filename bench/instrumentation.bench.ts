import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { execa } from 'execa';
import { PYTHON_PACKAGE_DIR } from '../src/profile/python-hook.js';

/**
 * Added time per iteration of the zero-code PyTorch instrumentation: the same
 * DataLoader loop (in-memory tensors, no workers, a trivial step) timed with
 * and without the patch, in one Python process, rounds alternating so a noisy
 * neighbour hits both alike; the median round counts. The loop is as cheap as
 * a DataLoader loop gets, so the difference is the instrumentation's cost:
 * two perf_counter() calls, one buffered event line, the budget and stop-file
 * checks, and the flush every 100 ms.
 */
const PYTHON = '/usr/bin/python3';

// biome-ignore lint/complexity/noUselessStringRaw: raw, so that a backslash added to the Python stays Python's
const SCRIPT = String.raw`
import os, sys, time, statistics, json
import torch
from torch.utils.data import DataLoader, TensorDataset
import torch.utils.data.dataloader as dl
from ds_analyzer import _torch, _recorder

N = int(sys.argv[1]); ROUNDS = int(sys.argv[2])
data = TensorDataset(torch.zeros(N * 4, 2))
sink = [0.0]

def loop():
    loader = DataLoader(data, batch_size=4)
    start = time.perf_counter()
    for (x,) in loader:
        sink[0] += 1.0
    return (time.perf_counter() - start) / N

plain, inst = [], []
loop()
for r in range(ROUNDS):
    _torch.unpatch(dl)
    plain.append(loop())
    _recorder.reset_for_tests(); _torch.reset_for_tests()
    _torch.patch(dl)
    inst.append(loop())
    _recorder.recorder().end("budget")
print(json.dumps({"plainUs": statistics.median(plain) * 1e6, "instUs": statistics.median(inst) * 1e6}))
`;

export async function bench(): Promise<void> {
  const probe = await execa(PYTHON, ['-c', 'import torch'], { reject: false });
  if (probe.exitCode !== 0) {
    process.stdout.write(`instrumentation: skipped: needs ${PYTHON} with torch (apt-get install python3-torch)\n`);
    return;
  }
  const dir = mkdtempSync(join(tmpdir(), 'dsa-bench-inst-'));
  try {
    const script = join(dir, 'bench.py');
    writeFileSync(script, SCRIPT);
    const iterations = 20_000;
    const rounds = 5;
    const result = await execa(PYTHON, [script, String(iterations), String(rounds)], {
      env: {
        PYTHONPATH: PYTHON_PACKAGE_DIR,
        DSA_MODE: 'cached',
        DSA_EVENTS_DIR: join(dir, 'events'),
        DSA_STOP_FILE: join(dir, 'STOP'),
        DSA_SYNC: '1',
        DSA_PROTOCOL: '1',
      },
    });
    const { plainUs, instUs } = JSON.parse(result.stdout.trim().split('\n').pop()!) as {
      plainUs: number;
      instUs: number;
    };
    process.stdout.write(
      `instrumentation: DataLoader loop, ${iterations} iterations x ${rounds} rounds (median round)\n` +
        `  loop uninstrumented:       ${plainUs.toFixed(2)} us/iteration\n` +
        `  loop instrumented:         ${instUs.toFixed(2)} us/iteration\n` +
        `  added by ds_analyzer:      ${(instUs - plainUs).toFixed(2)} us/iteration (ratio ${(instUs / plainUs).toFixed(2)}x; target < 50 us)\n`,
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[1] !== undefined && import.meta.url === pathToFileURL(process.argv[1]).href) {
  await bench();
}
