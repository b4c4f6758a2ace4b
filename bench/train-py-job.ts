// The PyTorch job the CI-gate benches judge: examples/pytorch/train.py (squeezenet on CPU) on a generated ImageFolder,
// and its slower copy: larger crops than 64 px (more compute a sample, a slowdown the job really has, but not of a size
// chosen: 68 px read +6.7% to +11%, 70 px +24%), or each iteration longer by a share injected into its optimizer step
// (python/slower_step.py).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const TRAIN = fileURLToPath(new URL('../../examples/pytorch/train.py', import.meta.url));
const SLOWER_STEP = fileURLToPath(new URL('../../bench/python/slower_step.py', import.meta.url));
const MAKE_DATASET = fileURLToPath(new URL('../../examples/pytorch/make_dataset.py', import.meta.url));

/** How the copy is slower: a larger crop than 64 px, or each iteration `percent` longer (a busy wait in its step). */
export type TrainPySlowdown = { px: number } | { percent: number };

/** Makes the dataset under `work`; its training folder, and the job's command for the reference or the slower copy. */
export async function trainPyJob(
  work: string,
  slowdown: TrainPySlowdown,
): Promise<{ data: string; command: (slower: boolean) => string[] }> {
  const root = join(work, 'jpegs');
  const classes = ['--classes', '10', '--train-per-class', '150', '--val-per-class', '5'];
  await execa('/usr/bin/python3', [MAKE_DATASET, root, ...classes]);
  const args = ['-a', 'squeezenet1_0', '-b', '16', '-j', '2', '--no-val'];
  const command = (slower: boolean): string[] => {
    if (!slower) return ['/usr/bin/python3', TRAIN, ...args, '--image-size', '64', root];
    if ('px' in slowdown) return ['/usr/bin/python3', TRAIN, ...args, '--image-size', String(slowdown.px), root];
    return ['/usr/bin/python3', SLOWER_STEP, String(slowdown.percent), TRAIN, ...args, '--image-size', '64', root];
  };
  return { data: join(root, 'train'), command };
}
