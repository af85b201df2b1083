import type { Command } from 'commander';
import { listAudits } from '../../experiment/registry.js';

export function registerAudits(program: Command): void {
  program
    .command('audits')
    .description('list the registered audits (experiments a run store can hold, the command that runs each)')
    .option('--json', 'print JSON')
    .action((options: { json?: boolean }) => {
      const audits = listAudits().map((a) => ({
        name: a.name,
        title: a.title,
        description: a.description,
        command: `echolens ${a.command} run`,
        calibrate: a.calibrate !== undefined,
      }));
      const width = Math.max(...audits.map((a) => a.name.length), 4);
      const lines = audits.map(
        (a) => `${a.name.padEnd(width)}  ${a.title}: ${a.description}\n${' '.repeat(width)}  run: ${a.command}${a.calibrate ? '; calibrate: available' : ''}\n`,
      );
      process.stdout.write(options.json ? `${JSON.stringify({ audits }, null, 2)}\n` : lines.join(''));
    });
}
