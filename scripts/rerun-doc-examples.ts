/**
 * Runs again the real runs whose outputs the docs show, into docs/examples/ (npm run docs:examples):
 * a profile of examples/pytorch/train.py on a generated JPEG ImageFolder, a validate run of it at one
 * CPU, and doctor's findings on this machine. Takes about 10 minutes on 2 cores; run it on a quiet
 * machine, then `npm run docs:cli` renders the blocks and docs/examples/README.md gets the date and machine.
 */
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { execa } from 'execa';
import { diagnose } from '../src/system/probes/diagnose.js';
import { DOCTOR, PROFILE, PROFILE_COMMAND, ROOT, VALIDATE_ARGS, VALIDATION } from './doc-examples.js';

const PYTHON = '/usr/bin/python3';
// A fixed folder: the paths the outputs name are the same at every rerun.
const WORK = '/tmp/dsa-doc-examples';
const CLI = join(ROOT, 'bin/ds-analyzer.js');

rmSync(WORK, { recursive: true, force: true });
mkdirSync(WORK, { recursive: true });
copyFileSync(join(ROOT, 'examples/pytorch/train.py'), join(WORK, 'train.py'));
await execa(
  PYTHON,
  [
    join(ROOT, 'examples/pytorch/make_dataset.py'),
    join(WORK, 'imagefolder'),
    '--classes',
    '10',
    '--train-per-class',
    '150',
  ],
  { stdio: 'inherit' },
);

// The command as shown, run with this checkout's CLI and the Python that has torch.
const env = { ...process.env, PATH: `/usr/bin:${process.env.PATH ?? ''}` };
const [command, ...rest] = PROFILE_COMMAND.split(' ').slice(1);
const profileArgs = [command!, '--out', join(ROOT, PROFILE), ...rest.map((a) => (a === 'python3' ? PYTHON : a))];
await execa(process.execPath, [CLI, ...profileArgs], { cwd: WORK, env, stdio: 'inherit' });
// The job's logs stay out of the repository: the outputs shown name nothing in them.
rmSync(join(ROOT, PROFILE.replace(/\.json$/, '.d')), { recursive: true, force: true });
const validation = await execa(process.execPath, [CLI, 'validate', join(ROOT, PROFILE), ...VALIDATE_ARGS, '--json'], {
  cwd: WORK,
  env,
  stderr: 'inherit',
  reject: false,
});
writeFileSync(join(ROOT, VALIDATION), validation.stdout);
writeFileSync(
  join(ROOT, DOCTOR),
  JSON.stringify(
    await diagnose({ cwd: WORK, env: process.env, nvidiaSmi: 'nvidia-smi', dataDirs: [join(WORK, 'imagefolder')] }),
    null,
    1,
  ) + '\n',
);
process.stdout.write(
  `docs/examples: written; now npm run docs:cli, and put the date and machine in docs/examples/README.md\n`,
);
