import { appendFileSync } from 'node:fs';
import type { Command } from 'commander';
import { z } from 'zod';
import { loadConfigFile } from '../../core/config-file.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { GateConfig } from '../../gate/config.js';
import { baselineGate } from '../../gate/baseline.js';
import { gatedRuns, gateInput, gateOfRun, isSimulatedRun } from '../../gate/collect.js';
import { baselinePairs, compareToBaseline } from '../../report/history.js';
import { evaluateGate } from '../../gate/evaluate.js';
import { registeredGateSchema, resolveRegisteredGate } from '../../gate/registered.js';
import { listAudits } from '../../experiment/registry.js';
import { renderGateMarkdown, renderGateText, renderJUnit } from '../../gate/render.js';
import { measurementOf } from '../../experiment/measurement.js';
import { openStore, type RunInfo } from '../../store/run-store.js';
import { readOnce } from '../../store/read-once.js';
import { checkedNumber, emit, positiveNumber, numberOption } from '../options.js';
import { mapSequential } from '../../core/map-sequential.js';
import { closing } from '../../core/closing.js';

/** Any YAML with an optional `gate:` section (an audit config, or a file holding only the gate) over the registered audits' keys. */
const gateFileSchema = () => z.object({ gate: registeredGateSchema().optional() }).passthrough();

/** "a, b and c". */
function listText(items: readonly string[]): string {
  return items.length <= 1 ? (items[0] ?? '') : `${items.slice(0, -1).join(', ')} and ${items.at(-1)}`;
}

const nonNegativeNumber = checkedNumber('--max-change', (n) => Number.isFinite(n) && n >= 0, 'a number ≥ 0');
const fraction = (name: string) => checkedNumber(name, (n) => Number.isFinite(n) && n >= 0 && n <= 1, 'a fraction between 0 and 1');

/** `echolens gate`: the flags of every registered audit's thresholds come from its `gate` member. */
export function registerGate(program: Command): void {
  const gated = listAudits().filter((a) => a.gate !== undefined);
  const commands = gated.map((a, i) => (i === 0 ? `\`echolens ${a.command} run\`` : `\`${a.command} run\``));
  const gateCommand = program
    .command('gate')
    .description('CI gate: check the runs of a store against thresholds; exit 1 when a target fails (JUnit XML, GitHub step summary)')
    .argument('<run.db>', `run store written by ${[...commands, '`demo`'].join(' / ')}`)
    .option(
      '--run <id...>',
      `only these runs (default: the latest measurement of each design of an audit that has gate checks: ${gated.map((a) => a.name).join(', ')})`,
    )
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
    .option(
      '--baseline <run|first|tag>',
      'drift over time: gate the change of each headline statistic from this measurement to the latest (fails when significant and larger than --max-change)',
    )
    .option('--against <run|latest|tag>', 'with --baseline: the measurement gated (default latest)')
    .option(
      '--max-change <delta>',
      'with --baseline: the largest |change| that passes even when significant (default 0; config gate.maxChange)',
      nonNegativeNumber,
    )
    .option('--junit <file>', 'write the checks as JUnit XML (one testcase per check)')
    .option('--summary <file>', 'append the Markdown summary here (default: $GITHUB_STEP_SUMMARY when set)')
    .option('--format <format>', 'stdout: text (failures and the verdict), md or json', 'text')
    .addOption(numberOption('--bootstrap <B>', 'bootstrap replicates (default: each run config’s value)', positiveNumber))
    .addHelpText(
      'after',
      [
        '',
        'Thresholds: flags win over --config, which wins over the `gate:` section recorded in the run’s own config,',
        `which wins over the defaults (${failsByDefault.length > 0 ? `${listText(failsByDefault)} fail; ` : ''}at most 5% failed cells).`,
        'Exit codes: 0 every check passed, 1 a check failed or the verdict is not computable (answers that cannot come from a model reading its requests), 2 bad usage or an unreadable store.',
        'Runs on sim: models are flagged SIMULATED: their verdict measures nothing real.',
        'Without --run, each design’s latest measurement is gated. With --baseline, only the change from the baseline is gated',
        '(a sign-flip test over the sampled units with the interval that inverts it; docs/over-time.md).',
      ].join('\n'),
    )
    .action(async (db: string, options, command: Command) => {
      const format = options.json ? 'json' : String(options.format);
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
      const result = await closing(readOnce(openStore(db, { readonly: true })), async (store) => {
        if (options.against !== undefined && options.baseline === undefined) throw new InvalidArgumentError('--against', 'goes with --baseline');
        if (options.baseline !== undefined) {
          const { pairs, single } = await baselinePairs(store, {
            baseline: String(options.baseline),
            ...(options.against ? { against: String(options.against) } : {}),
            allowSingle: true,
          });
          const firsts = await mapSequential(single, async (design) => {
            const run = (await store.listRuns()).find((r) => measurementOf(r).designId === design) as RunInfo;
            return { design, audit: run.experiment, run: run.id };
          });
          const latestRuns = pairs.map((p) => p.latest);
          const fromRuns = latestRuns.map((r) => gateOfRun(r)?.maxChange).find((x) => typeof x === 'number');
          const fileChange = fromFile?.maxChange;
          const maxChange = Number(options.maxChange ?? (typeof fileChange === 'number' ? fileChange : undefined) ?? fromRuns ?? 0);
          const thresholds = resolveRegisteredGate(...latestRuns.map(gateOfRun), fromFile, fromFlags);
          return baselineGate(
            await mapSequential(pairs, (pair) => compareToBaseline(store, pair)),
            maxChange,
            thresholds,
            latestRuns.some(isSimulatedRun) || pairs.some((p) => isSimulatedRun(p.baseline)),
            firsts,
          );
        } else {
          const runs = await gatedRuns(store, options.run);
          // One gate for the store: the runs' own sections apply in order, then the file, then flags.
          const thresholds = resolveRegisteredGate(...runs.map(gateOfRun), fromFile, fromFlags);
          const B = options.bootstrap ? Math.round(options.bootstrap) : undefined;
          return evaluateGate(await mapSequential(runs, (run) => gateInput(store, run, B ? { B } : {})), thresholds);
        }
      });
      if (options.junit) emit(renderJUnit(result), options.junit);
      const summaryFile: string | undefined = options.summary ?? (process.env.GITHUB_STEP_SUMMARY || undefined);
      if (summaryFile) appendFileSync(summaryFile, renderGateMarkdown(result));
      const out = format === 'json' ? `${JSON.stringify(result, null, 2)}\n` : format === 'md' ? renderGateMarkdown(result) : renderGateText(result);
      process.stdout.write(out);
      // Not computable is never a pass: the gate fails (exit 1) and says why.
      if (result.verdict !== 'pass') process.exitCode = 1;
    });
}
