// GPU utilisation and memory through nvidia-smi's query interface, stable for scripts: --format=csv,noheader,nounits
// gives bare numbers (MiB) and '[N/A]'.
import type { ResultPromise } from 'execa';
import { createInterface } from 'node:readline';
import { z } from 'zod';
import { firstLine } from '../kernel/errno.js';

const MIB = 1024 * 1024;

/** A value nvidia-smi may print as a number or '[N/A]' / 'N/A' (null). */
const optionalNumber = z
  .string()
  .trim()
  .transform((text, ctx) => {
    if (/^\[?N\/A\]?$/i.test(text) || /^\[Not Supported\]$/i.test(text)) return null;
    const value = Number(text);
    if (text === '' || !Number.isFinite(value) || value < 0) {
      ctx.addIssue({ code: 'custom', message: `not a number: '${text}'` });
      return z.NEVER;
    }
    return value;
  });

/** One line of `--query-gpu=index,utilization.gpu,memory.used,memory.total`. */
const GpuLineSchema = z
  .tuple([z.string().trim().regex(/^\d+$/), optionalNumber, optionalNumber, optionalNumber])
  .transform(([index, utilPct, memUsedMiB, memTotalMiB]) => ({
    index: Number(index),
    utilPct: utilPct === null ? null : Math.min(100, utilPct),
    memUsedBytes: memUsedMiB === null ? null : memUsedMiB * MIB,
    memTotalBytes: memTotalMiB === null ? null : memTotalMiB * MIB,
  }));

/** One GPU's reading: its index, utilisation (0..100) and memory in bytes, each null when not reported. */
export type GpuReading = z.output<typeof GpuLineSchema>;

/** Parses one CSV line of the sampling query; null for a line that does not validate. */
export function parseGpuLine(line: string): GpuReading | null {
  const result = GpuLineSchema.safeParse(line.split(','));
  return result.success ? result.data : null;
}

/** Mean utilisation and summed memory over GPUs, each null when no GPU reports it. */
export interface GpuAggregate {
  /** Mean utilisation over the GPUs that report it, 0..100. */
  utilPct: number | null;
  /** Memory used, bytes, summed over the GPUs that report it. */
  memBytes: number | null;
  /** GPUs with a recent reading. */
  gpus: number;
}

export interface GpuSampler {
  /** Aggregate of the latest reading per GPU; null before the first reading (or when stale). */
  latest(): GpuAggregate | null;
  /** Latest reading per GPU, by index. */
  readings(): GpuReading[];
  /** Kills nvidia-smi and waits for it to exit; idempotent. */
  stop(): Promise<void>;
}

export interface GpuSamplerOptions {
  /** nvidia-smi executable (a path, or a name looked up on PATH). */
  command?: string;
  /** Sampling period, ms (passed as -lms). */
  intervalMs: number;
}

/** Aggregates per-GPU readings into a mean utilisation and a memory sum. */
export function aggregateGpus(readings: GpuReading[]): GpuAggregate | null {
  if (readings.length === 0) return null;
  const utils = readings.flatMap((r) => (r.utilPct === null ? [] : [r.utilPct]));
  const mems = readings.flatMap((r) => (r.memUsedBytes === null ? [] : [r.memUsedBytes]));
  return {
    utilPct: utils.length > 0 ? utils.reduce((a, b) => a + b, 0) / utils.length : null,
    memBytes: mems.length > 0 ? mems.reduce((a, b) => a + b, 0) : null,
    gpus: readings.length,
  };
}

function describeSpawnError(command: string, error: unknown): string {
  const code = (error as { code?: string } | null)?.code;
  if (code === 'ENOENT') return `${command} not found`;
  return firstLine(error);
}

/** Starts `nvidia-smi ... -lms <interval>` and keeps the latest reading per GPU. */
export async function startGpuSampler(options: GpuSamplerOptions): Promise<GpuSampler> {
  // execa is loaded on use: commands that never sample (whatif, gate, report) start faster.
  const { execa } = await import('execa');
  const command = options.command ?? 'nvidia-smi';
  const intervalMs = Math.max(1, Math.round(options.intervalMs));
  // A reading older than this is from a hung nvidia-smi, not the current state.
  const staleMs = Math.max(5 * intervalMs, 5000);
  const latestByIndex = new Map<number, { reading: GpuReading; at: number }>();

  const child: ResultPromise = execa(
    command,
    [
      '--query-gpu=index,utilization.gpu,memory.used,memory.total',
      '--format=csv,noheader,nounits',
      '-lms',
      String(intervalMs),
    ],
    { stdin: 'ignore', stderr: 'ignore', buffer: false, reject: false, forceKillAfterDelay: 2000 },
  );

  if (child.stdout) {
    const lines = createInterface({ input: child.stdout });
    // A line that does not parse is skipped: the next reading comes within an interval.
    lines.on('line', (line) => {
      const reading = parseGpuLine(line);
      if (reading) latestByIndex.set(reading.index, { reading, at: Date.now() });
    });
  }

  const fresh = (): GpuReading[] => {
    const now = Date.now();
    return [...latestByIndex.values()]
      .filter((entry) => now - entry.at <= staleMs)
      .map((entry) => entry.reading)
      .sort((a, b) => a.index - b.index);
  };

  return {
    latest: () => aggregateGpus(fresh()),
    readings: fresh,
    async stop() {
      child.kill();
      await child.catch(() => undefined);
    },
  };
}

/** A GPU as the host facts record it. */
export interface GpuInfo {
  /** Model name as nvidia-smi prints it. */
  model: string;
  /** Total memory, bytes; null when not reported. */
  memBytes: number | null;
}

/** The outcome of asking nvidia-smi for the GPUs. */
export interface GpuProbe {
  /** ok: nvidia-smi answered; missing: not installed; failed: it ran and failed (driver, permissions). */
  status: 'ok' | 'missing' | 'failed';
  /** GPUs found (empty unless ok). */
  gpus: GpuInfo[];
  /** One line for the user. */
  detail: string;
}

/** Parses the output of `--query-gpu=name,memory.total --format=csv,noheader,nounits`. */
export function parseGpuList(stdout: string): GpuInfo[] {
  const gpus: GpuInfo[] = [];
  for (const line of stdout.split('\n')) {
    const comma = line.lastIndexOf(',');
    if (comma < 0) continue;
    // Split at the last comma: the model name comes first and is free text.
    const model = line.slice(0, comma).trim();
    const mem = optionalNumber.safeParse(line.slice(comma + 1));
    if (model === '' || !mem.success) continue;
    gpus.push({ model, memBytes: mem.data === null ? null : mem.data * MIB });
  }
  return gpus;
}

/** Runs nvidia-smi once and reports its GPUs, or why there are none; never throws. */
export async function probeGpus(command = 'nvidia-smi', timeoutMs = 10_000): Promise<GpuProbe> {
  try {
    const { execa } = await import('execa');
    const result = await execa(command, ['--query-gpu=name,memory.total', '--format=csv,noheader,nounits'], {
      stdin: 'ignore',
      reject: false,
      timeout: timeoutMs,
    });
    if (result.failed) {
      const code = (result.cause as { code?: string } | undefined)?.code;
      if (code === 'ENOENT') return { status: 'missing', gpus: [], detail: `${command} not found` };
      const why = String(result.stderr || result.stdout || result.shortMessage)
        .trim()
        .split('\n')[0];
      return { status: 'failed', gpus: [], detail: `${command} failed: ${why}` };
    }
    const gpus = parseGpuList(String(result.stdout));
    return { status: 'ok', gpus, detail: gpus.map((g) => g.model).join(', ') || 'no GPUs listed' };
  } catch (error) {
    return { status: 'failed', gpus: [], detail: describeSpawnError(command, error) };
  }
}
