// A profile run prints each warning once (issue 42: the DAMON warning came twice, live on stderr and again under the
// summary); a warning not shown live (added to the profile later) still comes under the summary.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { fileURLToPath } from 'node:url';
import { profileProgressHooks, reportProfileOutcome } from '../../src/cli/run-and-report.js';
import type { Io } from '../../src/cli/io.js';
import { ExitCode } from '../../src/errors.js';
import { RECLAIM_TEXT } from '../../src/profile/run-text.js';
import { readProfile } from '../../src/store/profile-store.js';

const FIXTURE = fileURLToPath(new URL('../../../test/fixtures/profiles/emulated-quick.json', import.meta.url));

test('the DAMON warning shown live is not printed again under the summary', () => {
  let out = '';
  const io: Io = {
    stdout: (t) => {
      out += t;
    },
    stderr: (t) => {
      out += t;
    },
    env: {},
    cwd: '/tmp',
    isTTY: false,
    onSignal: () => () => undefined,
  };
  const damon = RECLAIM_TEXT.profile.paused('kdamond 0 scheme 0');
  const later = 'a warning added to the profile after the run, never shown live';
  const shownWarnings = new Set<string>();
  profileProgressHooks(io, shownWarnings).onWarning!(damon);
  const profile = readProfile(FIXTURE);
  profile.warnings = [damon, later];
  reportProfileOutcome({ profile, path: 'p.json', exitCode: ExitCode.Ok, failureTail: null }, io, {
    json: false,
    shownWarnings,
  });
  const times = (needle: string) => out.split(needle).length - 1;
  assert.equal(times('DAMON pageout of idle memory'), 1, out);
  assert.equal(times('never shown live'), 1, out);
  assert.match(out, /1 warning printed above as it came/);
});
