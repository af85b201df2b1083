import { appendFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfigFile } from '../../core/config-file.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GateConfig } from '../../gate/config.js';
import { gatedRuns, gateInput, gateOfRun } from '../../gate/collect.js';
import { evaluateGate } from '../../gate/evaluate.js';
import { registeredGateSchema, resolveRegisteredGate } from '../../gate/registered.js';
import { listAudits } from '../../experiment/registry.js';
import { renderGateMarkdown, renderGateText, renderJUnit } from '../../gate/render.js';
import { openStore } from '../../store/run-store.js';
import { emit, positiveNumber } from '../options.js';

/** Any YAML with an optional `gate:` section (an audit config, or a file holding only the gate) over the registered audits' keys. */
const gateFileSchema = () => z.object({ gate: registeredGateSchema().optional() }).passthrough();

/** "a, b and c". */
function listText(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

function fraction(name: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!Number.isFinite(n) || n < 0 || n > 1) throw new InvalidArgumentError(name, `must be a fraction between 0 and 1, got "${value}"`);
    return n;
  };
}

/** `echolens gate`: the flags of every registered audit's thresholds come from its `gate` member. */
export function registerGate(program: Command): void {
  const gated = listAudits().filter((a) => a.gate !== undefined);
  const commands = gated.map((a, i) => (i === 0 ? `\`echolens ${a.command} run\`` : `\`${a.command} run\``));
  const gateCommand = program
    .command('gate')
    .description('CI gate: check the runs of a store against thresholds; exit 1 when a target fails (JUnit XML, GitHub step summary)')
    .argument('<run.db>', `run store written by ${[...commands, '`demo`'].join(' / ')}`)
    .option('--run <id...>', `only these runs (default: every run of an audit that has gate checks: ${gated.map((a) => a.name).join(', ')})`)
    .option('--config <file>', 'a YAML file whose `gate:` section sets the thresholds (an audit config, or a file with only `gate:`)');
  const flags = gated.flatMap((a) => a.gate?.flags ?? []);
  for (const flag of flags) {
    if (flag.flags.startsWith('--no-')) gateCommand.option(flag.flags, flag.description);
    else gateCommand.option(flag.flags, flag.description, positiveNumber(flag.flags.split(' ')[0] as string));
  }
  const failsByDefault = gated.flatMap((a) => (a.gate?.failsByDefault ? [a.gate.failsByDefault] : []));
  gateCommand
    .option(
      '--max-failed-cells <fraction>',
      'fail when more than this share of a run’s cells failed or are unfinished (default 0.05)',
      fraction('--max-failed-cells'),
    )
    .option('--junit <file>', 'write the checks as JUnit XML (one testcase per check)')
    .option('--summary <file>', 'append the Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)')
    .option('--format <format>', 'stdout: text (failures and the verdict), md or json', 'text')
    .option('--bootstrap <B>', 'bootstrap replicates (default: each run config’s value)', positiveNumber('--bootstrap'))
    .addHelpText(
      'after',
      [
        '',
        'Thresholds: flags win over --config, which wins over the `gate:` section recorded in the run’s own config,',
        `which wins over the defaults (${failsByDefault.length > 0 ? `${listText(failsByDefault)} fail; ` : ''}at most 5% failed cells).`,
        'Exit codes: 0 every check passed, 1 a check failed or the verdict is not computable (answers that cannot come from a model reading its requests), 2 bad usage or an unreadable store.',
        'Runs on sim: models are flagged SIMULATED: their verdict measures nothing real.',
      ].join('\n'),
    )
    .action((db: string, options, command: Command) => {
      const format = String(options.format);
      if (!['text', 'md', 'json'].includes(format)) throw new InvalidArgumentError('--format', `must be text, md or json, got "${format}"`);
      const fromFile: GateConfig | undefined = options.config ? loadConfigFile(options.config, gateFileSchema()).config.gate : undefined;
      const fromFlags: Record<string, unknown> = {};
      for (const flag of flags) {
        // A `--no-…` flag switches its check off; commander defaults it to true, so only a flag given on the command line counts.
        if (flag.flags.startsWith('--no-')) {
          if (command.getOptionValueSource(flag.key) === 'cli') fromFlags[flag.key] = false;
        } else if (options[flag.key] !== undefined) fromFlags[flag.key] = options[flag.key];
      }
      if (options.maxFailedCells !== undefined) fromFlags.maxFailedCells = options.maxFailedCells;
      const store = openStore(db, { readonly: true });
      let result: ReturnType<typeof evaluateGate>;
      try {
        const runs = gatedRuns(store, options.run);
        // One gate for the store: the runs' own sections apply in order, then the file, then flags.
        const thresholds = resolveRegisteredGate(...runs.map(gateOfRun), fromFile, fromFlags);
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
      // Not computable is never a pass: the gate fails (exit 1) and says why.
      if (result.verdict !== 'pass') process.exitCode = 1;
    });
}
