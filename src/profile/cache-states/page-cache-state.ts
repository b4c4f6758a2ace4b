import type { Mode } from '../../schema/events.js';
import type { Dataset, DatasetFile } from '../../system/dataset/dataset.js';
import { dropCachesGlobally, evict, residency, warm, type WarmResult } from '../../system/page-cache/page-cache.js';
import { startColdKeeper } from '../../system/keepers/cold-keeper.js';
import { activeFileBytes } from '../../system/cgroups/memory-budget.js';
import { CpuLedger, type CpuAccount } from '../../system/kernel/cpu-ledger.js';
import { warmForCachedMode } from '../cached-subset.js';
import { finishKeeper, type CacheState, type PreparedState } from './cache-state.js';

/** Options of PageCacheState. */
export interface PageCacheStateOptions {
  /** Use the global drop_caches instead of per-file eviction (root only). */
  dropCaches: boolean;
  /** Cold keeper scan period, ms. */
  coldKeeperIntervalMs: number;
  /** Parallel readers for the warm-up. */
  warmConcurrency: number;
  /** Seconds warming may take before the cached mode runs on the resident subset warmed by then (default 120). */
  warmLimitSec?: number;
  /**
   * Charged with the states' CPU: the warm-up, its check and the warm keeper as 'warming', the eviction and its check
   * as 'eviction', the cold keeper as 'keeper'.
   */
  ledger?: CpuLedger;
}

// The warm keeper looks at the cached files at most this often; between two looks it waits KEEP_WARM_COST_RATIO times
// the last look's wall time and KEEP_WARM_CPU_RATIO times its CPU time, whichever is longer: at most a quarter of the
// profiler's goal of 1% of a CPU (a look's wall time alone let it take up to 1% on a quiet machine: 0.54% measured
// here). Every 2 s let a DAMON pageout scheme take 5.0% of a small PyTorch dataset's cached bytes from under the job
// (CI here); 250 ms costs a small dataset nothing.
const KEEP_WARM_MIN_MS = 250;
const KEEP_WARM_COST_RATIO = 100;
const KEEP_WARM_CPU_RATIO = 400;

/**
 * Keeps the cached mode's files resident while the job runs: every few seconds, warm() checks each file (one cachestat)
 * and reads back any the kernel dropped. A proactive reclaimer (a DAMON pageout scheme, as on the machines here) takes
 * freshly warmed pages that sit in long-idle memory and pages a job reads once an epoch; measured on a 3 GiB dataset in
 * a 2 GiB group, up to 6.4% of a cached run's bytes then came from storage. The job's own reads still decide the proof:
 * a page dropped and read by the job before the keeper brought it back counts against it. The period grows with the
 * cost of a look (KEEP_WARM_COST_RATIO times the residency pass just timed, KEEP_WARM_CPU_RATIO times its CPU), so at
 * 1.28M files the keeper stays out of a short mode. Each look's CPU is timed on the thread's clock, turn by turn of its
 * walk (a ledger of its own), and charged to `cpu` too.
 */
function keepWarm(
  files: Dataset['files'],
  lookMs: number,
  lookCpuMs: number,
  cpu: CpuAccount | undefined,
): { stop(): Promise<void> } {
  let stopped = false;
  let running: Promise<unknown> = Promise.resolve();
  let timer: NodeJS.Timeout | undefined;
  const looks = new CpuLedger();
  const schedule = (wallMs: number, cpuMs: number): void => {
    timer = setTimeout(
      () => {
        running = (async () => {
          const started = performance.now();
          const before = looks.reading().warming.cpuSec;
          // The warm before the run made the access-time updates: a look need not read a byte of every file again.
          await warm(files, { concurrency: 1, touchAccessTimes: false, cpu: looks.account('warming') }).catch(
            () => undefined,
          );
          const lookCpuSec = looks.reading().warming.cpuSec - before;
          cpu?.add(lookCpuSec);
          if (!stopped) schedule(performance.now() - started, lookCpuSec * 1000);
        })();
      },
      Math.max(KEEP_WARM_MIN_MS, wallMs * KEEP_WARM_COST_RATIO, cpuMs * KEEP_WARM_CPU_RATIO),
    );
    timer.unref();
  };
  schedule(lookMs, lookCpuMs);
  return {
    stop: async () => {
      stopped = true;
      clearTimeout(timer);
      await running;
    },
  };
}

/**
 * The real page-cache state: cached warms every file (or a resident subset, see cached-subset.ts), checks residency and
 * keeps the files warm; cold evicts the dataset's files (not the whole machine's cache: the framework's own libraries
 * would then be re-read, and throttled, as job I/O) and keeps it cold with a keeper while the job reads it again in
 * later epochs.
 */
export class PageCacheState implements CacheState {
  constructor(private readonly options: PageCacheStateOptions) {}

  async prepare(mode: Mode, dataset: Dataset): Promise<PreparedState> {
    const ledger = this.options.ledger;
    if (mode === 'cached') {
      const cpu = ledger?.account('warming');
      // Each warm timed on its own ledger (and charged to `cpu` after): the last one sets the keeper's first wait.
      let last: { files: readonly DatasetFile[]; result: WarmResult; cpuSec: number } | undefined;
      const timedWarm = async (files: readonly DatasetFile[]): Promise<WarmResult> => {
        const pass = new CpuLedger();
        const result = await warm(files, { concurrency: this.options.warmConcurrency, cpu: pass.account('warming') });
        last = { files, result, cpuSec: pass.reading().warming.cpuSec };
        cpu?.add(last.cpuSec);
        return result;
      };
      // A dataset larger than the memory budget, or too slow to warm: a resident subset (cached-subset.ts).
      const plan = await warmForCachedMode(dataset, { warm: timedWarm, warmLimitSec: this.options.warmLimitSec });
      // A warm of exactly these files looked at each of them as it left them: no second pass (11 s at 1.28M files
      // here).
      const seen = last !== undefined && last.files === plan.dataset.files ? last.result.residency : undefined;
      const before = seen ?? (await residency(plan.dataset.files, undefined, { cpu }));
      // A look of the keeper is a warm of files already resident, its wall time its CPU: the last warm's CPU (its
      // passes over the files, not the reads that waited on storage) sets the first wait.
      const lookMs = (last?.cpuSec ?? 0) * 1000;
      const keeper = keepWarm(plan.dataset.files, lookMs, lookMs, cpu);
      return {
        residentBytesBefore: before.residentBytes,
        finish: async () => {
          await keeper.stop();
          return {};
        },
        ...(plan.subset ? { subset: { dataset: plan.dataset, record: plan.subset } } : {}),
      };
    }
    // Per-file eviction re-checks what it advised, so its figure spares a second pass over a large dataset.
    let residentAfterEvict: number | undefined;
    // The synthetic mode's residency, only recorded, is nobody's: it is read before the run, outside its CPU.
    const cpu = mode === 'cold' ? ledger?.account('eviction') : undefined;
    if (mode === 'cold') {
      if (this.options.dropCaches) await dropCachesGlobally();
      else residentAfterEvict = (await evict(dataset.files, { sync: true, cpu })).residentBytesAfter;
    }
    const before =
      residentAfterEvict !== undefined
        ? { residentBytes: residentAfterEvict }
        : await residency(dataset.files, undefined, { cpu });
    if (mode !== 'cold') return { residentBytesBefore: before.residentBytes, finish: async () => ({}) };
    const keeper = startColdKeeper(dataset.files, { intervalMs: this.options.coldKeeperIntervalMs, ledger });
    // With the dataset evicted, the active file pages left are others': the job's libraries, other programs' files.
    const active = activeFileBytes();
    return {
      residentBytesBefore: before.residentBytes,
      finish: () => finishKeeper(keeper),
      ...(active
        ? { otherActiveFile: { bytes: Math.max(0, active.bytes - before.residentBytes), source: active.source } }
        : {}),
    };
  }
}
