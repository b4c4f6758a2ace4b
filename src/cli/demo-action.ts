import { relative, resolve } from 'node:path';
import { runDemo, type DemoInput } from '../demo/run-demo.js';
import { ExitCode } from '../errors.js';
import { demoProgressHooks, renderDemoOutcome } from '../report/demo-terminal.js';
import { modelWhatIf } from '../report/whatif-adapter.js';
import { writeReport } from '../report/write-report.js';
import { profileProgressHooks, reportProfileOutcome } from './run-and-report.js';
import type { Io } from './io.js';

/** Options of `demo` as commander hands them over. */
export interface RawDemoOptions {
  quick?: boolean;
  datasetDir?: string;
  profilesDir: string;
  reportsDir: string;
  report: boolean;
  throttle: boolean;
  remote?: boolean;
  json?: boolean;
}

/** What `demo` does once commander has parsed its flags: the demo's run, its summary and report, and the exit code. */
export async function demoAction(raw: RawDemoOptions, io: Io): Promise<number> {
  const shownWarnings = new Set<string>();
  const input: DemoInput = {
    quick: Boolean(raw.quick),
    datasetDir: raw.datasetDir ?? null,
    profilesDir: resolve(io.cwd, raw.profilesDir),
    throttle: raw.throttle,
    remote: Boolean(raw.remote),
    cwd: io.cwd,
    env: io.env,
  };
  const outcome = await runDemo(input, {
    ...profileProgressHooks(io, shownWarnings),
    ...demoProgressHooks(io.stderr),
  });
  const { run } = outcome;
  const report =
    raw.report && run.exitCode === ExitCode.Ok
      ? await writeReport(run.profile, run.path, resolve(io.cwd, raw.reportsDir), modelWhatIf)
      : null;
  const exitCode = reportProfileOutcome(run, io, { json: Boolean(raw.json), shownWarnings });
  // With --json stdout holds only the profile, so the rest goes to stderr.
  (raw.json ? io.stderr : io.stdout)(
    renderDemoOutcome({ ...outcome, report }, (path) => relative(io.cwd, path) || path),
  );
  return exitCode;
}
