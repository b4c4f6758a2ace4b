import type { ModeResult } from '../schema/profile.js';

/**
 * Whether a workers-sweep run's job applied DSA_NUM_WORKERS: every rank that reported says it ran `asked` workers and
 * what its script had set. The manual API and jobs that write the protocol themselves cannot, and say neither.
 */
export function workersApplied(result: ModeResult, asked: number): boolean {
  const reporting = result.ranks.filter((rank) => rank.loader !== undefined || rank.workers !== null);
  return (
    reporting.length > 0 &&
    reporting.every((rank) => rank.workers === asked && rank.loader?.scriptWorkers !== undefined)
  );
}
