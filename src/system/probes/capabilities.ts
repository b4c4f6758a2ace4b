// What this machine lets ds-analyzer do, for the `doctor` command. Each check tries the real thing where it is cheap
// and harmless (a throwaway cgroup, a posix_fadvise on a temp file) instead of guessing from permissions.
import { accessSync, closeSync, constants, mkdtempSync, openSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { z } from 'zod';
import { UserError } from '../../errors.js';
import type { CapabilityRowSchema } from '../../schema/doctor-output.js';
import { CAPABILITY_NAMES, CAPABILITY_TEXT, type CapabilityName } from './capability-text.js';
import { createJobCgroup, detectCgroups, type CgroupInfo } from '../cgroups/cgroups.js';
import { wholeDiskDevice } from '../kernel/block-device.js';
import { probeGpus } from './gpu.js';
import { reclaimingDamonSchemes } from '../cgroups/damon.js';
import { FADV, MAP_SHARED, PROT_READ, loadLibc } from '../kernel/libc.js';
import { errnoName, errorCode, firstLine } from '../kernel/errno.js';

/** One row of the doctor table, its name one of CAPABILITY_NAMES. */
export type Capability = z.infer<typeof CapabilityRowSchema> & { name: CapabilityName };

export interface ProbeOptions {
  /** The caller's working directory: the storage throttle is tried on its disk. */
  cwd: string;
  /** A delegated cgroup v2 group to try job groups under (DSA_CGROUP_PARENT of the caller's environment). */
  cgroupParent?: string;
  /** nvidia-smi executable. */
  nvidiaSmi?: string;
  /** Python interpreters to try for torch, in order. */
  pythons?: string[];
  /** Time limit of each python check, ms. */
  pythonTimeoutMs?: number;
  /** Skip creating a throwaway cgroup (report from detection only). */
  skipThrottleTest?: boolean;
}

function row(name: CapabilityName, available: boolean, detail: string): Capability {
  return { name, available, detail, ...CAPABILITY_TEXT[name] };
}

function cgroupRow(info: CgroupInfo): Capability {
  const parts = (['io', 'memory', 'cpuset'] as const).map((c) => {
    const s = info.controllers[c];
    const label = c === 'io' && s.version === 'v1' ? 'blkio' : c;
    return `${label} ${s.writable ? 'writable' : s.version ? 'read-only' : 'absent'}`;
  });
  const any = Object.values(info.controllers).some((s) => s.writable);
  return row('cgroup', any, `${info.version}: ${parts.join(', ')}`);
}

/** posix_fadvise(DONTNEED) and mincore on a small temp file, through the same bindings the page-cache code uses. */
function libcRows(): Capability[] {
  const load = loadLibc();
  if (!load.ok) return [row('page-cache-eviction', false, load.reason), row('residency', false, load.reason)];
  const { libc } = load;
  const dir = mkdtempSync(join(tmpdir(), 'ds-analyzer-doctor-'));
  const file = join(dir, 'probe');
  let fd = -1;
  try {
    writeFileSync(file, Buffer.alloc(libc.pageSizeBytes, 1));
    fd = openSync(file, 'r');
    const fadvise = libc.posixFadvise(fd, 0, 0, FADV.dontNeed);
    const address = libc.mmap(libc.pageSizeBytes, PROT_READ, MAP_SHARED, fd, 0);
    let mincore = address;
    if (address >= 0) {
      mincore = libc.mincore(address, libc.pageSizeBytes, new Uint8Array(1));
      libc.munmap(address, libc.pageSizeBytes);
    }
    return [
      row(
        'page-cache-eviction',
        fadvise === 0,
        fadvise === 0 ? 'posix_fadvise(DONTNEED) works' : `posix_fadvise failed (${errnoName(-fadvise)})`,
      ),
      row('residency', mincore === 0, mincore === 0 ? 'mincore works' : `mmap/mincore failed (${errnoName(-mincore)})`),
    ];
  } catch (error) {
    return [row('page-cache-eviction', false, firstLine(error)), row('residency', false, firstLine(error))];
  } finally {
    if (fd >= 0) closeSync(fd);
    rmSync(dir, { recursive: true, force: true });
  }
}

async function throttleRow(info: CgroupInfo, cwd: string, skip: boolean): Promise<Capability> {
  const io = info.controllers.io;
  const label = io.version === 'v1' ? 'blkio' : 'io';
  if (!io.writable) return row('storage-throttle', false, io.reason);
  const device = (await wholeDiskDevice(cwd)) ?? (await wholeDiskDevice('/'));
  if (!device) return row('storage-throttle', false, 'no block device found for the working directory or /');
  if (skip) return row('storage-throttle', true, `${label} writable under ${io.parentDir} (not tried)`);
  try {
    const group = createJobCgroup({
      name: `doctor-${process.pid}`,
      readBpsDevice: { device, bytesPerSec: 1e12 },
      cgroups: info,
    });
    await group.remove({ timeoutMs: 5000 });
    return row('storage-throttle', true, `created and removed a ${label} group with a read limit on ${device}`);
  } catch (error) {
    return row('storage-throttle', false, error instanceof UserError ? error.message : firstLine(error));
  }
}

function dropCachesRow(): Capability {
  try {
    accessSync('/proc/sys/vm/drop_caches', constants.W_OK);
    return row('drop-caches', true, '/proc/sys/vm/drop_caches is writable');
  } catch (error) {
    return row('drop-caches', false, `/proc/sys/vm/drop_caches: ${errorCode(error)}`);
  }
}

async function torchRow(pythons: string[], timeoutMs: number): Promise<Capability> {
  const results = await Promise.all(
    pythons.map(async (python) => {
      const { execa } = await import('execa');
      const result = await execa(python, ['-c', 'import torch; print(torch.__version__)'], {
        stdin: 'ignore',
        reject: false,
        timeout: timeoutMs,
      });
      if (!result.failed) return { python, ok: true, text: `torch ${String(result.stdout).trim()}` };
      const code = (result.cause as { code?: string } | undefined)?.code;
      const why = code === 'ENOENT' ? 'not found' : result.timedOut ? `no answer in ${timeoutMs / 1000} s` : 'no torch';
      return { python, ok: false, text: why };
    }),
  );
  // The first interpreter is the one a job's `python3` finds on PATH: torch elsewhere does not help that job.
  const job = results[0];
  const elsewhere = results.slice(1).find((r) => r.ok);
  const detail = results.map((r) => `${r.python}: ${r.text}`).join('; ') || 'no interpreter tried';
  const hint =
    job && !job.ok && elsewhere
      ? `; a job run with ${job.python} gets no torch: run it with ${elsewhere.python}, or profile --python`
      : '';
  return row('python-torch', job?.ok ?? false, detail + hint);
}

function damonRow(): Capability {
  const schemes = reclaimingDamonSchemes();
  return row(
    'no-proactive-reclaim',
    schemes.length === 0,
    schemes.length === 0 ? 'no DAMON pageout of physical memory (sysfs schemes, DAMON_RECLAIM)' : schemes.join('; '),
  );
}

/** Checks everything `doctor` reports; never throws. Rows come in CAPABILITY_NAMES order. */
export async function probeCapabilities(options: ProbeOptions): Promise<Capability[]> {
  const info = detectCgroups({ v2Parent: options.cgroupParent });
  const root = process.getuid?.() === 0;
  const [throttle, gpu, torch] = await Promise.all([
    throttleRow(info, options.cwd, options.skipThrottleTest ?? false),
    probeGpus(options.nvidiaSmi ?? 'nvidia-smi'),
    torchRow(options.pythons ?? ['python3', '/usr/bin/python3'], options.pythonTimeoutMs ?? 20_000),
  ]);
  const rows: Capability[] = [
    row('root', root, root ? 'running as root' : `running as uid ${process.getuid?.() ?? 'unknown'}`),
    cgroupRow(info),
    ...libcRows(),
    throttle,
    dropCachesRow(),
    row('nvidia-smi', gpu.status === 'ok', gpu.detail),
    torch,
    damonRow(),
  ];
  return CAPABILITY_NAMES.map((name) => rows.find((r) => r.name === name)!);
}
