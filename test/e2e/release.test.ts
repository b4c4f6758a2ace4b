/**
 * The release tarball (scripts/make-release.sh, docs/install.md): its
 * launcher finds its folder through symlinks, and the artefact, built and
 * extracted into a temp folder, runs doctor with no node or npm on PATH and,
 * where root can make one, in a network namespace of its own (no network).
 */
import { strict as assert } from 'node:assert';
import { test } from 'node:test';
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));
const LAUNCHER = join(ROOT, 'scripts/release/launcher.sh');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** A release-shaped folder whose runtime/node is a sh script that prints its arguments. */
function fakeRelease(parent: string): string {
  const dir = join(parent, 'ds analyzer'); // a space: the launcher must quote its paths
  mkdirSync(join(dir, 'bin'), { recursive: true });
  mkdirSync(join(dir, 'runtime'));
  copyFileSync(LAUNCHER, join(dir, 'bin/ds-analyzer'));
  chmodSync(join(dir, 'bin/ds-analyzer'), 0o755);
  writeFileSync(join(dir, 'runtime/node'), '#!/bin/sh\nfor a in "$@"; do echo "$a"; done\n');
  chmodSync(join(dir, 'runtime/node'), 0o755);
  return dir;
}

test('the launcher runs the bundled node on the bundled CLI, through an absolute and a chain of relative symlinks', async () => {
  const tmp = mkdtempSync(join(tmpdir(), 'dsa-launcher-'));
  try {
    const dir = fakeRelease(tmp);
    const expected = [join(dir, 'bin/ds-analyzer.js'), 'doctor', '--json', 'two words'];
    const links = join(tmp, 'links');
    mkdirSync(links);
    symlinkSync(join(dir, 'bin/ds-analyzer'), join(links, 'abs'));
    symlinkSync('abs', join(links, 'rel')); // relative to the link's own folder, not the caller's
    for (const entry of [join(dir, 'bin/ds-analyzer'), join(links, 'abs'), join(links, 'rel')]) {
      const result = await execa(entry, ['doctor', '--json', 'two words'], {
        cwd: '/',
        reject: false,
        env: { PATH: '/usr/bin:/bin' },
        extendEnv: false,
      });
      assert.equal(result.exitCode, 0, `${entry}: ${result.stderr}`);
      assert.deepEqual(result.stdout.split('\n'), expected, entry);
    }
    // Found through PATH, as after `ln -s .../bin/ds-analyzer /usr/local/bin/`.
    const viaPath = await execa('rel', ['x'], {
      cwd: tmp,
      reject: false,
      env: { PATH: `${links}:/usr/bin:/bin` },
      extendEnv: false,
    });
    assert.deepEqual(viaPath.stdout.split('\n'), [expected[0], 'x']);
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});

/** Why the artefact cannot be built here, or null. */
function cannotBuild(): string | null {
  if (process.platform !== 'linux' || process.arch !== 'x64')
    return `the release is linux-x64 only (this is ${process.platform}-${process.arch})`;
  if (!existsSync(join(ROOT, 'dist/src/cli/main.js'))) return 'dist/src is not built';
  return null;
}

/** A PATH folder with every command of /usr/bin but node, npm and compilers: a GPU server as issue 32 describes it. */
function pathWithoutNode(parent: string): string {
  const dir = join(parent, 'clean-bin');
  mkdirSync(dir);
  for (const name of readdirSync('/usr/bin')) {
    if (/^(node|nodejs|npm|npx|corepack|cc|c\+\+|gcc.*|g\+\+.*|make)$/.test(name)) continue;
    symlinkSync(join('/usr/bin', name), join(dir, name));
  }
  return dir;
}

// A guard against a hang, not a timing: the packing copies node_modules, beside other files (scripts/test-plan.ts)
// on a machine that may be busy (seen: over 120 s at a load of 20 on 2 cores).
test('the release tarball runs doctor with no node or npm on PATH and no network', { timeout: 300_000 }, async (t) => {
  const why = cannotBuild();
  if (why) return t.skip(why);
  const tmp = mkdtempSync(join(tmpdir(), 'dsa-release-'));
  try {
    const built = await execa('bash', [join(ROOT, 'scripts/make-release.sh')], {
      cwd: ROOT,
      reject: false,
      // The suite runs on a fresh build: the script's own `npm run build` would only repeat it. gzip -1, not -6: the
      // compression was the largest CPU cost of the test (gzip -6: 10.8 s on its 159 MB tar; -1: 4.9 s, 11% larger).
      env: { DSA_RELEASE_DIR: join(tmp, 'out'), DSA_RELEASE_SKIP_BUILD: '1', DSA_RELEASE_GZIP_LEVEL: '1' },
    });
    assert.equal(built.exitCode, 0, built.stderr);
    const tarball = join(tmp, 'out', `ds-analyzer-${VERSION}-linux-x64.tar.gz`);
    assert.ok(existsSync(tarball), built.stdout);
    await execa('tar', ['xzf', tarball, '-C', tmp]);
    const dir = join(tmp, basename(tarball, '.tar.gz'));
    for (const path of [
      'bin/ds-analyzer',
      'bin/ds-analyzer.js',
      'runtime/node',
      'dist/src/cli/main.js',
      'python/sitecustomize.py',
      'INSTALL.md',
      'node_modules/koffi/build/koffi/linux_x64',
    ]) {
      assert.ok(existsSync(join(dir, path)), `missing ${path}`);
    }
    // Production dependencies only, and koffi's binding for this platform alone.
    assert.equal(existsSync(join(dir, 'node_modules/typescript')), false, 'a devDependency was packed');
    assert.deepEqual(readdirSync(join(dir, 'node_modules/koffi/build/koffi')), ['linux_x64']);

    const home = join(tmp, 'home');
    mkdirSync(home);
    const link = join(tmp, 'usr-local-bin');
    mkdirSync(link);
    symlinkSync(join(dir, 'bin/ds-analyzer'), join(link, 'ds-analyzer'));
    const path = `${link}:${pathWithoutNode(tmp)}`;
    const noNode = await execa('sh', ['-c', 'command -v node'], {
      env: { PATH: path },
      extendEnv: false,
      reject: false,
    });
    assert.notEqual(noNode.exitCode, 0, `node is still on the test's PATH: ${noNode.stdout}`);
    // No network: a namespace of its own where root can make one (unshare -n), else the network is left as it is.
    const isolated =
      process.getuid?.() === 0 && (await execa('unshare', ['-n', 'true'], { reject: false })).exitCode === 0;
    const argv = isolated ? ['unshare', '-n', 'ds-analyzer'] : ['ds-analyzer'];
    if (!isolated) t.diagnostic('not root or no unshare: doctor ran with the network');
    const doctor = await execa(argv[0], [...argv.slice(1), 'doctor', '--json'], {
      cwd: home,
      env: { HOME: home, PATH: path },
      extendEnv: false,
      reject: false,
    });
    assert.equal(doctor.exitCode, 0, doctor.stderr);
    const output = JSON.parse(doctor.stdout) as {
      kind: string;
      capabilities: { name: string; available: boolean; detail: string }[];
    };
    assert.equal(output.kind, 'doctor');
    // mincore works for any user on Linux: a missing residency row means the packed koffi did not load.
    const residency = output.capabilities.find((c) => c.name === 'residency');
    assert.equal(residency?.available, true, `the packed koffi did not load: ${residency?.detail}`);
    assert.doesNotMatch(doctor.stderr, /\n\s+at /, 'a stack trace leaked');
  } finally {
    rmSync(tmp, { recursive: true, force: true });
  }
});
