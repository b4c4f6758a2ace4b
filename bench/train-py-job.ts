// The PyTorch job the CI-gate benches judge: examples/pytorch/train.py (squeezenet on CPU) on a generated ImageFolder,
// and its slower copy (larger crops than 64 px: more compute a sample, a slowdown the job really has).
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';

const TRAIN = fileURLToPath(new URL('../../examples/pytorch/train.py', import.meta.url));
const MAKE_DATASET = fileURLToPath(new URL('../../examples/pytorch/make_dataset.py', import.meta.url));

/** Makes the dataset under `work`; its training folder, and the job's command for the reference or the copy (`slowerPx`). */
export async function trainPyJob(
  work: string,
  slowerPx: number,
): Promise<{ data: string; command: (slower: boolean) => string[] }> {
  const root = join(work, 'jpegs');
  const classes = ['--classes', '10', '--train-per-class', '150', '--val-per-class', '5'];
  await execa('/usr/bin/python3', [MAKE_DATASET, root, ...classes]);
  const job = ['/usr/bin/python3', TRAIN, '-a', 'squeezenet1_0', '-b', '16', '-j', '2', '--no-val'];
  return {
    data: join(root, 'train'),
    command: (slower) => [...job, '--image-size', String(slower ? slowerPx : 64), root],
  };
}
