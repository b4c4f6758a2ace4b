import { resolve } from 'node:path';
import { Command } from 'commander';
import { diagnose } from '../system/probes/diagnose.js';
import { doctorJson, renderDoctor } from '../report/doctor-terminal.js';
import { collect, EXIT_CODES_HELP, type CommandFactory } from './program.js';

export const doctorCommand: CommandFactory = (io, result) =>
  new Command('doctor')
    .description('show what this machine allows the profiler to do, and what each missing piece costs')
    .option('--json', 'print the table as JSON (with --data: { capabilities, dataset })')
    .option('--data <dir>', "also name the file system of a dataset folder and what it lets the cache modes prove (repeatable)", collect)
    .addHelpText(
      'after',
      `
Examples:
  $ ds-analyzer doctor
  $ sudo ds-analyzer doctor --json
  $ ds-analyzer doctor --data /mnt/imagenet
${EXIT_CODES_HELP}`,
    )
    .action(async (options: { json?: boolean; data?: string[] }) => {
      const diagnosis = await diagnose({
        nvidiaSmi: io.env.DSA_NVIDIA_SMI ?? 'nvidia-smi',
        cwd: io.cwd,
        cgroupParent: io.env.DSA_CGROUP_PARENT,
        dataDirs: options.data ? options.data.map((dir) => resolve(io.cwd, dir)) : null,
      });
      io.stdout(options.json ? JSON.stringify(doctorJson(diagnosis), null, 1) + '\n' : renderDoctor(diagnosis));
      result.exitCode = 0;
    });
