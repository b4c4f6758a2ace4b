// Host facts for the profile. systeminformation gives a better CPU name and the distribution; each call is time-boxed
// and falls back to the os module, so a slow or failing probe never delays or breaks a profile.
import os from 'node:os';
import type { Profile } from '../../schema/profile.js';
import { detectCgroups } from '../cgroups/cgroups.js';
import { lruGenState } from '../kernel/lru-gen.js';
import { probeGpus, type GpuInfo } from './gpu.js';

/** The host block of a profile. */
export type HostFacts = Profile['host'];

export interface HostFactsOptions {
  /** nvidia-smi executable. */
  nvidiaSmi?: string;
  /** Time box of each probe, ms. */
  timeoutMs?: number;
}

/** Resolves to the promise's value, or to `fallback` on error or after `ms`. */
async function within<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
    timer.unref();
  });
  try {
    return await Promise.race([promise.catch(() => fallback), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/** Collects CPU, memory, OS, GPUs, root and cgroup version; about 3 s at worst, never throws. */
export async function hostFacts(options: HostFactsOptions = {}): Promise<HostFacts> {
  const ms = options.timeoutMs ?? 3000;
  // Loaded here, not at start-up: it costs half a second of CPU that whatif, gate and report do not need.
  const { default: si } = await import('systeminformation');
  const [cpu, mem, osInfo, gpus] = await Promise.all([
    within(si.cpu(), ms, null),
    within(si.mem(), ms, null),
    within(si.osInfo(), ms, null),
    within<GpuInfo[]>(
      probeGpus(options.nvidiaSmi).then((probe) => probe.gpus),
      ms,
      [],
    ),
  ]);
  const osCpus = os.cpus();
  const cpuModel =
    [cpu?.manufacturer, cpu?.brand]
      .filter((s) => s?.trim())
      .join(' ')
      .trim() ||
    osCpus[0]?.model?.trim() ||
    'unknown';
  const logical = cpu?.cores && cpu.cores > 0 ? cpu.cores : osCpus.length || os.availableParallelism();
  const distro = osInfo?.distro
    ? `${osInfo.distro}${osInfo.release ? ` ${osInfo.release}` : ''}`
    : `${os.type()} ${os.release()}`;
  return {
    // gethostname(2), the name the ranks give (the writer's and the Python hook's default) and fall back to.
    hostname: os.hostname(),
    cpuModel,
    cpus: Math.max(1, Math.round(logical)),
    memBytes: mem?.total && mem.total > 0 ? mem.total : os.totalmem(),
    os: distro,
    kernel: osInfo?.kernel || os.release(),
    gpus,
    root: process.getuid?.() === 0,
    cgroup: detectCgroups().version,
    lruGen: lruGenState(),
  };
}
