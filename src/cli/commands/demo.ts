import type { Command } from 'commander';
import { runDemo } from '../../demo/demo.js';

export function registerDemo(program: Command): void {
  program
    .command('demo')
    .description('run the three audits (persona, memory, continuation) end to end on bundled inputs and write the HTML report (offline: simulated models)')
    .option('--out-dir <dir>', 'where the run store and report.html go', 'echolens-demo')
    .option('--target <model>', 'run the demo on this real model instead of the simulation (e.g. openai:gpt-4.1-mini)')
    .option('--judge <model>', 'judge model for the persona audit (default sim:judge; use a real one with --target)')
    .option('--labeler <model>', 'labeler model for the memory audit (default sim:labeler)')
    .option('--fresh', 'start from an empty store instead of reusing the previous demo cells')
    .addHelpText(
      'after',
      '\nWithout --target the demo uses sim: models — deterministic simulations with planted effects.\nThey measure nothing about any real model; they show what the audits compute and report.',
    )
    .action(async (options) => {
      const started = Date.now();
      const result = await runDemo({
        outDir: options.outDir,
        ...(options.target ? { target: options.target } : {}),
        ...(options.judge ? { judge: options.judge } : {}),
        ...(options.labeler ? { labeler: options.labeler } : {}),
        ...(options.fresh ? { fresh: true } : {}),
      });
      const lines = [
        result.simulated
          ? 'echolens demo — SIMULATED models (sim:persona, sim:judge, sim:memory, sim:labeler, sim:continuation): planted effects, no real model was called or measured.'
          : `echolens demo — target ${options.target}`,
        ...result.headlines.map((h) => `  ${h.text}`),
        `report: ${result.reportPath}`,
        `run store: ${result.db} (echolens report ${result.db} --format md|json|csv)`,
        `finished in ${((Date.now() - started) / 1000).toFixed(1)} s`,
      ];
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
