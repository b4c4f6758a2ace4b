import { test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { EMULATOR_PRESETS } from '../../src/emulator/presets.js';
import { ExitCode } from '../../src/errors.js';
import { demoProgressHooks, renderDemoOutcome, type DemoSummary } from '../../src/report/demo-terminal.js';
import { readProfile } from '../../src/store/profile-store.js';
import { notEnoughData } from '../../src/whatif/fit/fitted.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

function outcome(exitCode: ExitCode, fields: Partial<DemoSummary> = {}): DemoSummary {
  const profile = readProfile(FIXTURE);
  const preset = EMULATOR_PRESETS.quick;
  return {
    run: { profile, path: '/work/profiles/emulated-demo.json', exitCode, failureTail: null },
    settings: {
      ...preset,
      cpus: profile.host.cpus,
      meanFileBytes: profile.dataset.meanFileBytes,
      storageBwBytesPerSec: preset.storageBwBytesPerSec,
    },
    whatif: null,
    report: null,
    ...fields,
  };
}

const shown = (path: string) => path.replace('/work/', '');

test('after a run that ended well: the settings check, the what-if (or why there is none), the report and the next steps', () => {
  const text = renderDemoOutcome(
    outcome(ExitCode.Ok, {
      whatif: notEnoughData('modes.cold.storageReadBytesPerSec', 'cold'),
      report: {
        html: '/work/reports/d.html',
        markdown: '/work/reports/d.md',
        pngs: ['a.png', 'b.png'],
        whatIfNote: null,
        noFonts: false,
      },
    }),
    shown,
  );
  const parts = text.split('\n\n');
  assert.match(parts[0], /^\nThe emulated job was set to: compute 10 ms\/batch/);
  assert.match(text, /\nwhat-if: not available for this profile: .*storageReadBytesPerSec/);
  assert.match(text, /\nreport: reports\/d\.html \(self-contained\) and reports\/d\.md with 2 PNG charts\n/);
  assert.match(text, /\nNext, on this profile:\n {2}ds-analyzer whatif profiles\/emulated-demo\.json --cache 50%/);
});

test('after a failed run: only the settings check, measured as far as the job got', () => {
  const text = renderDemoOutcome(outcome(ExitCode.JobFailed), shown);
  assert.match(text, /^\nThe emulated job was set to/);
  assert.doesNotMatch(text, /what-if|report:|Next, on this profile/);
});

test("the demo's progress lines name the dataset, whether it was reused, and the throttle or why there is none", () => {
  let text = '';
  const hooks = demoProgressHooks((t) => (text += t));
  hooks.onDatasetStart!(EMULATOR_PRESETS.quick, '/cache/demo');
  hooks.onDatasetReady!({ dir: '/cache/demo', files: 64, bytes: 17_300_000, reused: false });
  hooks.onThrottle!(null, 12.5e6);
  hooks.onThrottle!('disabled by --no-throttle', 12.5e6);
  assert.equal(
    text,
    'demo: dataset of 64 files of 256.0 KiB in /cache/demo\n' +
      'demo: generated 16.5 MiB\n' +
      'demo: cold storage throttled to 12.5 MB/s\n' +
      "demo: storage is not throttled (disabled by --no-throttle); the cold mode reads at the disk's own speed\n",
  );
});
