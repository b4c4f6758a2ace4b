import { resolve } from 'node:path';
import { Command } from 'commander';
import { probeCapabilities } from '../system/capabilities.js';
import { fileSystemWarnings, rootFileSystems } from '../system/file-systems.js';
import { table } from '../report/format.js';
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
      const rows = await probeCapabilities({ nvidiaSmi: io.env.DSA_NVIDIA_SMI ?? 'nvidia-smi', cwd: io.cwd, cgroupParent: io.env.DSA_CGROUP_PARENT });
      const dataset = options.data ? await rootFileSystems(options.data.map((dir) => resolve(io.cwd, dir))) : null;
      if (options.json) {
        io.stdout(JSON.stringify(dataset ? { capabilities: rows, dataset } : rows, null, 1) + '\n');
      } else {
        io.stdout(table([['capability', 'ok', 'found'], ...rows.map((r) => [r.name, r.available ? 'yes' : 'NO', r.detail])]) + '\n');
        const missing = rows.filter((r) => !r.available);
        if (missing.length) io.stdout('\nWhat is missing, and what it costs:\n');
        for (const r of missing) io.stdout(`- ${r.name}: ${r.impact}\n  fix: ${r.fix}\n`);
        if (dataset) {
          io.stdout(`\n${table([['dataset', 'file system', 'source', 'mounted at'], ...dataset.map((d) => [d.root, d.type, d.source, d.mountPoint])])}\n`);
          const unresolved = (options.data ?? []).map((dir) => resolve(io.cwd, dir)).filter((dir) => !dataset.some((d) => d.root === dir));
          const limits = [...unresolved.map((dir) => `--data ${dir}: cannot be resolved to a mounted file system (does it exist?)`), ...fileSystemWarnings(dataset)];
          io.stdout(limits.length ? limits.map((w) => `- ${w}\n`).join('') : 'The cached and cold modes can be proven on these file systems.\n');
        }
      }
      result.exitCode = 0;
    });
