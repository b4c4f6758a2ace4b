import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, realpathSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { run } from '../../src/cli/main.js';
import { doctorCommandWith } from '../../src/cli/doctor.js';
import { ExitCode } from '../../src/errors.js';
import { DoctorOutputSchema } from '../../src/schema/doctor-output.js';
import { CAPABILITY_NAMES, CAPABILITY_TEXT, type CapabilityName } from '../../src/system/probes/capability-text.js';
import { CGROUP_TEXT } from '../../src/system/cgroups/cgroup-text.js';
import { programForDocs } from '../../src/cli/cli-docs.js';
import type { Diagnosis, DiagnoseInput } from '../../src/system/probes/diagnose.js';
import { jobPython } from '../../src/system/probes/job-python.js';
import { assertFollowsSchema } from '../schema/follows-schema.js';
import { mountOf, parseMountinfo } from '../../src/system/kernel/mountinfo.js';
import { fakeIo } from './fake-io.js';

/** Terminal text with its wrapped lines joined again (lines wrap at 120 characters, continued indented). */
function unwrapped(text: string): string {
  return text.replace(/\n {2,}(?!fix:)/g, ' ');
}

test('doctor lists every capability with what was found, and for each missing one its cost and fix', async () => {
  const io = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  assert.equal(await run(['doctor', '--json'], io), 0, io.err);
  const output = assertFollowsSchema(DoctorOutputSchema, JSON.parse(io.out), 'doctor --json');
  assert.equal(output.kind, 'doctor');
  assert.equal(output.dataset, null, 'no dataset without --data');
  const rows = output.capabilities;
  assert.deepEqual(
    rows.map((r) => r.name),
    [...CAPABILITY_NAMES],
  );
  const gpu = rows.find((r) => r.name === 'nvidia-smi')!;
  assert.equal(gpu.available, false, 'a missing nvidia-smi is reported as missing');
  for (const row of rows) {
    assert.ok(row.detail.length > 0, row.name);
    assert.ok(row.impact.length > 0 && row.fix.length > 0, row.name);
  }
  const text = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  assert.equal(await run(['doctor'], text), 0);
  assert.match(text.out, /What is missing, and what it costs:\n- nvidia-smi: /);
});

test('doctor --data names the file system of a dataset folder and what it cannot prove', async () => {
  const shm = existsSync('/dev/shm') ? '/dev/shm' : null;
  const io = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  const data = [tmpdir(), ...(shm ? [shm] : []), '/no/such/folder'];
  assert.equal(await run(['doctor', ...data.flatMap((d) => ['--data', d])], io), 0, io.err);
  assert.match(io.out, /dataset +file system +source +mounted at/);
  assert.match(io.out, /- --data \/no\/such\/folder: cannot be resolved/);
  // Only where /dev/shm itself is a tmpfs mount (any tmpfs elsewhere says nothing of it).
  const shmMount = shm
    ? mountOf(parseMountinfo(readFileSync('/proc/self/mountinfo', 'utf8')), realpathSync(shm))
    : null;
  if (shmMount?.type === 'tmpfs') {
    assert.match(unwrapped(io.out), /--data \/dev\/shm is on tmpfs .*there is no cold mode to measure/);
  }
  const json = fakeIo(tmpdir(), { ...process.env, DSA_NVIDIA_SMI: '/nonexistent/nvidia-smi' });
  assert.equal(await run(['doctor', '--json', '--data', tmpdir()], json), 0, json.err);
  const parsed = assertFollowsSchema(DoctorOutputSchema, JSON.parse(json.out), 'doctor --json --data');
  assert.deepEqual(parsed.capabilities.length, CAPABILITY_NAMES.length);
  assert.equal(parsed.dataset?.[0].root, tmpdir());
});

/** A machine where every capability works except `missing`; records what doctor asked it. */
function fakeMachine(missing: CapabilityName[]): {
  asked: DiagnoseInput[];
  diagnose: (input: DiagnoseInput) => Promise<Diagnosis>;
} {
  const asked: DiagnoseInput[] = [];
  return {
    asked,
    diagnose: async (input) => {
      asked.push(input);
      const capabilities = CAPABILITY_NAMES.map((name) => ({
        name,
        available: !missing.includes(name),
        detail: `fake ${name}`,
        ...CAPABILITY_TEXT[name],
      }));
      return {
        capabilities,
        dataset: null,
        unresolved: [],
        fileSystemWarnings: [],
        python: jobPython(input.env, input.cwd, 0, input.python),
      };
    },
  };
}

async function doctorOn(missing: CapabilityName[], args: string[]) {
  const machine = fakeMachine(missing);
  const io = fakeIo(tmpdir(), {
    DSA_NVIDIA_SMI: '/opt/nv/nvidia-smi',
    DSA_CGROUP_PARENT: '/sys/fs/cgroup/user.slice/ds',
  });
  const exitCode = await run(['doctor', ...args], io, [doctorCommandWith(machine.diagnose)]);
  return { exitCode, io, asked: machine.asked };
}

test('doctor under sudo names the python3 the job gets and why it is not the venv the user activated', async () => {
  const machine = fakeMachine([]);
  const io = fakeIo(tmpdir(), { PATH: '/nonexistent/sbin:/nonexistent/bin', SUDO_USER: 'alice', SUDO_UID: '1000' });
  assert.equal(await run(['doctor'], io, [doctorCommandWith(machine.diagnose)]), ExitCode.Ok, io.err);
  assert.match(io.out, /The job's python3: not found on PATH \(under sudo for alice\)/);
  assert.match(
    unwrapped(io.out),
    /- warning: running under sudo for alice: sudo's secure_path replaced alice's PATH, so no python3 is on it.*sudo env "PATH=\$PATH" ds-analyzer.*--python ~\/venv\/bin\/python/,
  );
});

test('plain doctor exits 0 whatever is missing, and passes DSA_NVIDIA_SMI and DSA_CGROUP_PARENT to the probes', async () => {
  const { exitCode, io, asked } = await doctorOn(['storage-throttle', 'root'], []);
  assert.equal(exitCode, ExitCode.Ok, io.err);
  assert.equal(io.err, '');
  assert.match(io.out, /- storage-throttle: --storage-bw is unavailable/);
  assert.equal(asked[0].nvidiaSmi, '/opt/nv/nvidia-smi');
  assert.equal(asked[0].cgroupParent, '/sys/fs/cgroup/user.slice/ds');
});

test('doctor --require exits 11 when a capability asked for is missing, naming only the missing ones', async () => {
  const { exitCode, io } = await doctorOn(['storage-throttle', 'root'], ['--require', 'python-torch,storage-throttle']);
  assert.equal(exitCode, ExitCode.MissingCapability);
  assert.equal(ExitCode.MissingCapability, 11);
  const lines = io.err.trimEnd().split('\n');
  assert.equal(lines.length, 1, io.err);
  assert.match(
    lines[0],
    /^ds-analyzer: --require: missing on this machine: storage-throttle \(each one's cost and fix are listed above\)/,
  );
  assert.doesNotMatch(lines[0], /python-torch|root/, 'neither what is present nor what was not asked for');
  assert.match(io.out, /- storage-throttle: [\s\S]*?\n {2}fix: /, 'the fix is in the table');
});

test('doctor --require exits 0 when every capability asked for is present', async () => {
  const { exitCode, io } = await doctorOn(['storage-throttle'], ['--require', 'python-torch, residency']);
  assert.equal(exitCode, ExitCode.Ok, io.err);
  assert.equal(io.err, '');
});

test('doctor --json --require: the JSON names what was asked and what is missing, and the exit code says so', async () => {
  const { exitCode, io } = await doctorOn(
    ['nvidia-smi', 'drop-caches'],
    ['--json', '--require', 'drop-caches,residency,drop-caches'],
  );
  assert.equal(exitCode, ExitCode.MissingCapability);
  const output = assertFollowsSchema(DoctorOutputSchema, JSON.parse(io.out), 'doctor --json --require');
  assert.deepEqual(output.required, ['drop-caches', 'residency']);
  assert.deepEqual(output.missingRequired, ['drop-caches']);
  assert.match(io.err, /missing on this machine: drop-caches \(each one's fix is in its row's "fix"\)/);
});

test('doctor --require with a name that is no capability is a bad value, listing the names', async () => {
  const { exitCode, io, asked } = await doctorOn([], ['--require', 'storage-throttle,gpu']);
  assert.equal(exitCode, ExitCode.BadValue);
  assert.match(
    io.err,
    /^ds-analyzer: --require: 'gpu' is not a capability doctor checks; use any of root, cgroup, .*no-proactive-reclaim\n$/,
  );
  assert.equal(asked.length, 0, 'fails before probing the machine');
  assert.equal(io.out, '');
});

test("every flag doctor's texts name is a flag of a command", async () => {
  const flags = new Set((await programForDocs()).commands.flatMap((c) => c.options.map((o) => o.long)));
  // systemd-run's own flags, in the fix that starts a delegated group.
  const foreign = new Set(['--user', '--scope']);
  const texts = [...Object.values(CAPABILITY_TEXT).flatMap((t) => [t.impact, t.fix]), CGROUP_TEXT.fix];
  const named = texts.flatMap((text) => [...text.matchAll(/(?<![\w-])--[a-z][a-z-]*/g)].map((m) => m[0]));
  assert.ok(named.includes('--storage-bw'), 'the scan found the flags');
  assert.deepEqual(
    named.filter((flag) => !flags.has(flag) && !foreign.has(flag)),
    [],
    'flags that no command has',
  );
});
