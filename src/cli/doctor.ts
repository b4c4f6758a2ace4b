import { Command } from 'commander';
import { probeCapabilities } from '../system/capabilities.js';
import { table } from '../report/format.js';
import { EXIT_CODES_HELP, type CommandFactory } from './program.js';

export const doctorCommand: CommandFactory = (io, result) =>
  new Command('doctor')
    .description('show what this machine allows the profiler to do, and what each missing piece costs')
    .option('--json', 'print the table as JSON')
    .addHelpText(
      'after',
      `
Examples:
  $ ds-analyzer doctor
  $ sudo ds-analyzer doctor --json
${EXIT_CODES_HELP}`,
    )
    .action(async (options: { json?: boolean }) => {
      const rows = await probeCapabilities({ nvidiaSmi: io.env.DSA_NVIDIA_SMI ?? 'nvidia-smi' });
      if (options.json) {
        io.stdout(JSON.stringify(rows, null, 1) + '\n');
      } else {
        io.stdout(table([['capability', 'ok', 'found'], ...rows.map((r) => [r.name, r.available ? 'yes' : 'NO', r.detail])]) + '\n');
        const missing = rows.filter((r) => !r.available);
        if (missing.length) io.stdout('\nWhat is missing, and what it costs:\n');
        for (const r of missing) io.stdout(`- ${r.name}: ${r.impact}\n  fix: ${r.fix}\n`);
      }
      result.exitCode = 0;
    });
