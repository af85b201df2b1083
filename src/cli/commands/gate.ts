import { appendFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfigFile } from '../../core/config-file.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { type GateConfig, gateConfigSchema, resolveGate } from '../../gate/config.js';
import { gatedRuns, gateInput, gateOfRun } from '../../gate/collect.js';
import { evaluateGate } from '../../gate/evaluate.js';
import { renderGateMarkdown, renderGateText, renderJUnit } from '../../gate/render.js';
import { openStore } from '../../store/run-store.js';
import { emit, positiveNumber } from '../options.js';

/** Any YAML with an optional `gate:` section (an audit config, or a file holding only the gate). */
const gateFileSchema = z.object({ gate: gateConfigSchema.optional() }).passthrough();

function fraction(name: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(name, `must be a fraction between 0 and 1, got "${value}"`);
    return n;
  };
}

export function registerGate(program: Command): void {
  program
    .command('gate')
    .description('CI gate: check the runs of a store against thresholds; exit 1 when a target fails (JUnit XML, GitHub step summary)')
    .argument('<run.db>', 'run store written by `echolens persona run` / `memory run` / `continuation run` / `demo`')
    .option('--run <id...>', 'only these runs (default: every run of an audit that has gate checks: persona, memory, continuation)')
    .option('--config <file>', 'a YAML file whose `gate:` section sets the thresholds (an audit config, or a file with only `gate:`)')
    .option('--max-drift <delta>', 'persona: fail when the drift gap Δ (filler − real) is above this, e.g. 0.3', positiveNumber('--max-drift'))
    .option('--no-significant-drift', 'persona: do not fail on a significant drift gap (its 95% CI above 0)')
    .option('--max-elevation <fraction>', 'memory: fail when a persona or life-event tier’s DTW elevation is above this, e.g. 0.25 = +25%', positiveNumber('--max-elevation'))
    .option('--no-significant-elevation', 'memory: do not fail on a significant persona or life-event elevation')
    .option('--max-action-change <delta>', 'continuation: fail when the recent − cross fidelity difference (ITT) is above this in size, e.g. 0.2', positiveNumber('--max-action-change'))
    .option('--no-significant-action-change', 'continuation: do not fail on a significant recent − cross fidelity difference')
    .option('--max-failed-cells <fraction>', 'fail when more than this share of a run’s cells failed or are unfinished (default 0.05)', fraction('--max-failed-cells'))
    .option('--junit <file>', 'write the checks as JUnit XML (one testcase per check)')
    .option('--summary <file>', 'append the Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)')
    .option('--format <format>', 'stdout: text (failures and the verdict), md or json', 'text')
    .option('--bootstrap <B>', 'bootstrap replicates (default: each run config’s value)', positiveNumber('--bootstrap'))
    .addHelpText(
      'after',
      [
        '',
        'Thresholds: flags win over --config, which wins over the `gate:` section recorded in the run’s own config,',
        'which wins over the defaults (significant drift, significant elevation and a significant action change fail; at most 5% failed cells).',
        'Exit codes: 0 every check passed, 1 a check failed, 2 bad usage or an unreadable store.',
        'Runs on sim: models are flagged SIMULATED: their verdict measures nothing real.',
      ].join('\n'),
    )
    .action((db: string, options, command: Command) => {
      const format = String(options.format);
      if (!['text', 'md', 'json'].includes(format)) throw new InvalidArgumentError('--format', `must be text, md or json, got "${format}"`);
      const fromFile: GateConfig | undefined = options.config ? loadConfigFile(options.config, gateFileSchema).config.gate : undefined;
      const fromFlags: GateConfig = {
        ...(options.maxDrift !== undefined ? { maxDrift: options.maxDrift } : {}),
        ...(command.getOptionValueSource('significantDrift') === 'cli' ? { significantDrift: false } : {}),
        ...(options.maxElevation !== undefined ? { maxElevation: options.maxElevation } : {}),
        ...(command.getOptionValueSource('significantElevation') === 'cli' ? { significantElevation: false } : {}),
        ...(options.maxActionChange !== undefined ? { maxActionChange: options.maxActionChange } : {}),
        ...(command.getOptionValueSource('significantActionChange') === 'cli' ? { significantActionChange: false } : {}),
        ...(options.maxFailedCells !== undefined ? { maxFailedCells: options.maxFailedCells } : {}),
      };
      const store = openStore(db, { readonly: true });
      let result: ReturnType<typeof evaluateGate>;
      try {
        const runs = gatedRuns(store, options.run);
        // One gate for the store: the runs' own sections apply in order, then the file, then flags.
        const thresholds = resolveGate(...runs.map(gateOfRun), fromFile, fromFlags);
        const B = options.bootstrap ? Math.round(options.bootstrap) : undefined;
        result = evaluateGate(
          runs.map((run) => gateInput(store, run, B ? { B } : {})),
          thresholds,
        );
      } finally {
        store.close();
      }
      if (options.junit) emit(renderJUnit(result), options.junit);
      const summaryFile: string | undefined = options.summary ?? (process.env.GITHUB_STEP_SUMMARY || undefined);
      if (summaryFile) appendFileSync(summaryFile, renderGateMarkdown(result));
      const out = format === 'json' ? `${JSON.stringify(result, null, 2)}\n` : format === 'md' ? renderGateMarkdown(result) : renderGateText(result);
      process.stdout.write(out);
      if (result.verdict === 'fail') process.exitCode = 1;
    });
}
