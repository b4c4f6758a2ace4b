// Periodic resource sampling while a mode runs: machine CPU, the job tree's CPU and storage I/O, the dataset device's
// reads, the page cache and the GPUs (proc(5), iostats.rst).
import { KernelFile, meminfoBytes } from '../kernel/read-text.js';
import type { ResourceSample } from '../../schema/profile.js';
import type { GpuSampler } from './gpu.js';
import type { RootOrigin } from '../kernel/proc.js';
import { TreeAccounting } from '../kernel/tree-accounting.js';
import type { CpuLedger } from '../kernel/cpu-ledger.js';

/** Bytes per sector in /proc/diskstats, whatever the device's real sector size. */
const DISKSTATS_SECTOR_BYTES = 512;

/** Aggregate CPU jiffies from the first line of /proc/stat. */
export interface CpuTimes {
  /** Jiffies spent doing work (everything but idle and iowait). */
  busy: number;
  /** All jiffies. */
  total: number;
}

/** Parses the 'cpu ' line of /proc/stat; null when absent. */
export function parseCpuTimes(procStat: string): CpuTimes | null {
  // The aggregate line comes first; the per-CPU lines and the long intr line after it are not split.
  const start = procStat.startsWith('cpu ') ? 0 : procStat.indexOf('\ncpu ') + 1;
  if (start === 0 && !procStat.startsWith('cpu ')) return null;
  const end = procStat.indexOf('\n', start);
  const line = procStat.slice(start, end < 0 ? undefined : end);
  // user nice system idle iowait irq softirq steal (guest and guest_nice are already in user/nice)
  const values = line.trim().split(/\s+/).slice(1, 9).map(Number);
  if (values.length < 4 || values.some((v) => !Number.isFinite(v))) return null;
  const total = values.reduce((a, b) => a + b, 0);
  const idle = values[3] + (values[4] ?? 0);
  return { busy: total - idle, total };
}

/** Machine CPU utilisation between two readings, 0..100 over all cores. */
export function cpuPercent(before: CpuTimes, after: CpuTimes): number {
  const total = after.total - before.total;
  if (total <= 0) return 0;
  return Math.min(100, Math.max(0, (100 * (after.busy - before.busy)) / total));
}

/** Bytes read from the device 'major:minor' according to /proc/diskstats; null when not listed. */
export function parseDiskReadBytes(diskstats: string, device: string): number | null {
  const [major, minor] = device.split(':');
  for (const line of diskstats.split('\n')) {
    const f = line.trim().split(/\s+/);
    if (f.length >= 6 && f[0] === major && f[1] === minor) {
      const sectors = Number(f[5]);
      return Number.isFinite(sectors) ? sectors * DISKSTATS_SECTOR_BYTES : null;
    }
  }
  return null;
}

export interface SamplerOptions {
  /** Root of the job's process tree; null when it is known only later (see setRoot). */
  rootPid: number | null;
  /** Block device of the dataset, 'major:minor', or null (disk throughput is then 0). */
  device: string | null;
  /** Sampling period, ms; null: the caller samples with tick() on its own wake-up (one costs 0.2 ms of CPU). */
  intervalMs: number | null;
  /** GPU sampler whose latest reading goes into each sample; the caller starts and stops it. */
  gpu?: Pick<GpuSampler, 'latest' | 'readings'>;
  /** Called with each sample as it is taken (to save as soon as measured); errors are ignored. */
  onSample?: (sample: ResourceSample) => void;
  /** Charged with the CPU of each sample, as 'sampler' (onSample's work included); absent: nothing is charged. */
  ledger?: CpuLedger;
}

export interface Sampler {
  /** Sets the job's root pid when it becomes known (spawnedNow: the first sample need not walk every process). */
  setRoot(pid: number, root?: RootOrigin): void;
  /** Takes a sample now (the caller's clock, when intervalMs is null); never throws. */
  tick(): void;
  /** Samples so far (a copy). */
  samples(): ResourceSample[];
  /** Stops the timer, takes one final sample and returns all samples; idempotent. */
  stop(): ResourceSample[];
}

/** Starts sampling every `intervalMs` (or at each tick()); the timer never keeps Node alive and never throws. */
export function startSampler(options: SamplerOptions): Sampler {
  const tree = new TreeAccounting(options.rootPid);
  // Kept open and read again from the start at each sample: one pread each (KernelFile).
  const files = {
    stat: new KernelFile('/proc/stat'),
    diskstats: new KernelFile('/proc/diskstats'),
    meminfo: new KernelFile('/proc/meminfo'),
  };
  const samples: ResourceSample[] = [];
  let haveRoot = options.rootPid !== null;
  const rates = machineRates(files, options.device);
  let stopped = false;

  const take = (): void => {
    const t = Date.now();
    const { cpuPct, diskReadBytesPerSec } = rates(t);
    const job = haveRoot ? tree.sample() : null;
    const sample: ResourceSample = {
      t,
      cpuPct,
      jobCpuSec: job?.cpuSec ?? 0,
      jobProcesses: job?.pids.length ?? 0,
      jobReadBytes: job?.readBytes ?? 0,
      ...(job ? { jobWriteBytes: job.writeBytes } : {}),
      diskReadBytesPerSec,
      pageCacheBytes: meminfoBytes(files.meminfo.read(), 'Cached') ?? 0,
    };
    if (options.gpu) addGpu(sample, options.gpu);
    samples.push(sample);
    options.onSample?.(sample);
  };

  const takeOrSkip = (): void => {
    try {
      take();
    } catch {
      // A /proc hiccup or a failing consumer must not stop the measurement: the next tick retries
    }
  };
  const account = options.ledger?.account('sampler');
  const safeTake = account ? () => account.charge(takeOrSkip) : takeOrSkip;

  const timer = options.intervalMs === null ? null : setInterval(safeTake, Math.max(1, options.intervalMs));
  timer?.unref();

  return {
    setRoot(pid, root) {
      tree.setRoot(pid, root);
      haveRoot = true;
    },
    tick() {
      if (!stopped) safeTake();
    },
    samples: () => samples.slice(),
    stop() {
      if (!stopped) {
        stopped = true;
        if (timer) clearInterval(timer);
        safeTake();
        tree.close();
        for (const file of Object.values(files)) file.close();
      }
      return samples.slice();
    },
  };
}

/** Whole-machine CPU utilisation and the device's read rate since the previous call (the first: since the start). */
function machineRates(
  files: { stat: KernelFile; diskstats: KernelFile },
  device: string | null,
): (t: number) => { cpuPct: number; diskReadBytesPerSec: number } {
  let lastCpu = parseCpuTimes(files.stat.read() ?? '');
  let lastDisk = device ? parseDiskReadBytes(files.diskstats.read() ?? '', device) : null;
  let lastT = Date.now();
  return (t) => {
    const cpu = parseCpuTimes(files.stat.read() ?? '');
    const cpuPct = cpu && lastCpu ? cpuPercent(lastCpu, cpu) : 0;
    if (cpu) lastCpu = cpu;
    let diskReadBytesPerSec = 0;
    if (device) {
      const disk = parseDiskReadBytes(files.diskstats.read() ?? '', device);
      if (disk !== null && lastDisk !== null && t > lastT) {
        diskReadBytesPerSec = Math.max(0, ((disk - lastDisk) * 1000) / (t - lastT));
      }
      if (disk !== null) lastDisk = disk;
    }
    lastT = t;
    return { cpuPct, diskReadBytesPerSec };
  };
}

/** The accelerators' latest readings, on the sample. */
function addGpu(sample: ResourceSample, gpu: Pick<GpuSampler, 'latest' | 'readings'>): void {
  const latest = gpu.latest();
  if (!latest) return;
  if (latest.utilPct != null) sample.gpuUtilPct = latest.utilPct;
  if (latest.memBytes != null) sample.gpuMemBytes = latest.memBytes;
  sample.gpus = gpu.readings().map((r) => ({ index: r.index, utilPct: r.utilPct, memBytes: r.memUsedBytes }));
}
