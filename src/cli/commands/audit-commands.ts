import type { Command } from 'commander';
import type { AnyAudit, AuditRunResult } from '../../experiment/audit.js';
import { analyzeAuditRun, auditRunId } from '../../experiment/analyze-run.js';
import { requireCompleteRun } from '../../experiment/run-completeness.js';
import { materialsMarkdown, runMaterials } from '../../materials/report.js';
import { num, table, text } from '../../report/document/cells.js';
import { auditMarkdown, documentMarkdown } from '../../report/document/render-markdown.js';
import type { DocumentBlock } from '../../report/document/types.js';
import { openStore, type RunStore } from '../../store/run-store.js';
import { readOnce } from '../../store/read-once.js';
import { collect, emit, oneOf, positiveInteger, numberOption } from '../options.js';
import { closing } from '../../core/closing.js';
import { reportEnvelope } from '../report-envelope.js';
import { addLimitFlags, addMaterialFlags, addMeasurementFlags, CTRL_C_HELP, materialOverrides, REPORT_FILE_HELP, SET_FLAG_HELP } from '../run-options.js';

// Commander hands an action its parsed options as one untyped record; each hook reads the flags it added.
// biome-ignore lint/suspicious/noExplicitAny: commander's option record
type Options = Record<string, any>;

/** How an audit's `run` command differs from the generated one: its own flags and what they stand for. */
export interface AuditRunHooks<C, R> {
  description?: string;
  /** The config argument's name (`<config>`, or `[config]` when flags alone make a config) and help. */
  config?: readonly [string, string];
  defaultDb?: string;
  dryRunHelp?: string;
  /** Flags of its own, listed after `--target`. */
  flags?(run: Command): Command;
  /** The `--concurrency` parser (default: a positive number). */
  concurrency?: (value: string) => number;
  /** The authors' repository: adds `--prices`, `--materials`, `--procedure` and `--report <file>`. */
  materials?: string;
  /** Flags listed last. */
  lateFlags?(run: Command): Command;
  /** The help text after the options (default: what Ctrl-C does). */
  helpAfter?: string;
  /** The config overrides its own flags stand for (after `--set` and `--target`). */
  overrides?(options: Options): string[];
  /** The config without a config file (with `[config]`). */
  configFromFlags?(overrides: string[]): C;
  /** Before the run (not called on a dry run's behalf: it gets `options.dryRun`). */
  beforeRun?(config: C, options: Options): void;
  /** After a finished run: why it has nothing to analyse (printed as an error, exit 1), or null. */
  unusable?(run: AuditRunResult<unknown>, db: string): Promise<string | null>;
  /** The lines a finished run ends with, from the report's analysis. */
  headline?(analysis: R, simulated: boolean): string[];
}

/** How an audit's `report` command reads and writes a run. */
export interface AuditReportHooks<R> {
  description?: string;
  /** The JSON's documented schema (named in `--format`'s help). */
  schema?: string;
  /** Flags of its own (default: `--bootstrap`). */
  flags?(report: Command): Command;
  /**
   * The analysis the report prints, from the report command's options (`{}` after a run). `forReport` is
   * false when only the run's headline needs it (parts that only the report shows may be left out).
   */
  analyze(store: RunStore, runId: string, options: Options, forReport: boolean): Promise<R>;
  /** What the gate's verdict reads (default: the analysis). */
  gated?(analysis: R): unknown;
  /** The Markdown body (the verdict block goes under its title, the materials after it). */
  markdown(analysis: R, runId: string): string;
  /** The JSON keys after the verdict's (the materials' come last). */
  json(analysis: R): Record<string, unknown>;
}

/** An audit's command group: the generated `run` and `report` with its hooks, its own `calibrate` and further sub-commands. */
export interface AuditCommandHooks<C, R> {
  run?: AuditRunHooks<C, R>;
  report?: AuditReportHooks<R>;
  /** Replaces the generated `calibrate` (from the audit's `calibrate` member). */
  calibrate?(group: Command): void;
  /** Sub-commands of its own, after the shared ones. */
  extra?(group: Command): void;
}

/** The report of an audit without hooks: its document's sections and its `render.json`. */
function genericReport(audit: AnyAudit): AuditReportHooks<Awaited<ReturnType<typeof analyzeAuditRun>>> {
  return {
    flags: (report) => report.addOption(numberOption('--bootstrap <B>', 'bootstrap replicates (default: the run config’s value)', positiveInteger)),
    analyze: async (store, runId, options) => analyzeAuditRun(audit, store, await store.requireRun(runId), options.bootstrap ? { B: options.bootstrap } : {}),
    gated: (analyzed) => analyzed.report,
    markdown: (analyzed, runId) => auditMarkdown(audit, analyzed, `${audit.title} — ${runId}`),
    json: (analyzed) => ({ [audit.name]: audit.render.json(analyzed) }),
  };
}

/**
 * A run's report as `<audit> report` and `run --report` write it: the gate's verdict, `simulated`
 * and the manifest (JSON keys before the report's own; Markdown: the verdict block under the
 * title), then the report, then the run's materials.
 */
async function reportText<R>(store: RunStore, audit: AnyAudit, hooks: AuditReportHooks<R>, runId: string, analysis: R, format: 'md' | 'json'): Promise<string> {
  const envelope = await reportEnvelope(store, runId, { [audit.name]: hooks.gated ? hooks.gated(analysis) : analysis });
  const materials = await runMaterials(store, runId);
  return format === 'json'
    ? JSON.stringify({ runId, ...envelope.json, ...hooks.json(analysis), ...materials }, null, 2)
    : `${envelope.markdown(hooks.markdown(analysis, runId))}\n${materialsMarkdown(materials)}`;
}

/**
 * `echolens <audit> run | report | calibrate` made from a registered audit's members, with the
 * audit's hooks for its own flags and sub-commands (the built-in audits' groups are made here too,
 * see commands.ts). Everything goes through the shared protocol: `runAudit` for runs, the audit's
 * analysis and the shared envelope for reports (the same verdict as `echolens report` and `gate`).
 */
export function registerAuditCommands<C, R>(group: Command, audit: AnyAudit, hooks: AuditCommandHooks<C, R> = {}): void {
  const runHooks: AuditRunHooks<C, R> = hooks.run ?? {};
  const report = (hooks.report ?? genericReport(audit)) as AuditReportHooks<R>;
  const run = group
    .command('run')
    .description(runHooks.description ?? `run the ${audit.title} audit of a config (cached, resumable)`)
    .argument(...(runHooks.config ?? ['<config>', `YAML config (\`echolens schema ${audit.name}\` prints its JSON Schema)`]))
    .option('--db <file>', 'run store: a SQLite file, or a postgres:// URL shared with `echolens worker`', runHooks.defaultDb ?? `runs/${audit.name}.db`)
    .option('--dry-run', runHooks.dryRunHelp ?? 'print the plan size and the estimate (cells, tokens, dollars); call nothing')
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .option('--target <model>', 'replace the targets with this model ref; repeatable', collect, []);
  runHooks.flags?.(run);
  addMeasurementFlags(addLimitFlags(run, runHooks.concurrency));
  if (runHooks.materials !== undefined) addMaterialFlags(run, runHooks.materials).option('--report <file>', REPORT_FILE_HELP);
  runHooks.lateFlags?.(run);
  run.addHelpText('after', runHooks.helpAfter ?? `\n${CTRL_C_HELP}`).action(async (configFile: string | undefined, options: Options) => {
    const overrides: string[] = [...options.set];
    if (options.target.length > 0) overrides.push(`targets=${JSON.stringify(options.target)}`);
    overrides.push(...(runHooks.overrides?.(options) ?? []), ...materialOverrides(options));
    const config =
      configFile === undefined && runHooks.configFromFlags ? runHooks.configFromFlags(overrides) : (audit.loadConfig(configFile as string, overrides) as C);
    runHooks.beforeRun?.(config, options);
    // Loaded here: running pulls in the providers' adapters, which the other commands never need.
    const { runAuditCommand } = await import('../audit-run.js');
    const result = await runAuditCommand(audit, config, options as Parameters<typeof runAuditCommand>[2]);
    if (result === null) return;
    const unusable = (await runHooks.unusable?.(result, options.db)) ?? null;
    if (unusable !== null) {
      // Nothing usable is a failed run (exit 1), like a failed call: the message says what to change.
      process.stderr.write(`error: ${unusable}\n`);
      process.exitCode = 1;
      return;
    }
    if (runHooks.headline || options.report) {
      await closing(readOnce(openStore(options.db, { readonly: true })), async (store) => {
        const analysis = await report.analyze(store, result.runId, {}, Boolean(options.report));
        if (runHooks.headline) {
          // The headline, always: each target's verdict with its interval.
          const envelope = await reportEnvelope(store, result.runId, { [audit.name]: report.gated ? report.gated(analysis) : analysis });
          process.stdout.write(`${runHooks.headline(analysis, envelope.json.simulated).join('\n')}\n`);
          if (envelope.notComputableLine !== null) process.stdout.write(`${envelope.notComputableLine}\n`);
        }
        if (options.report) emit(await reportText(store, audit, report, result.runId, analysis, 'md'), options.report);
      });
    }
    process.stdout.write(`report: echolens ${audit.command} report ${options.db} · gate: echolens gate ${options.db}\n`);
  });

  const reportCommand = group
    .command('report')
    .description(report.description ?? `analyse a ${audit.name} run: the verdict, then the audit's report`)
    .argument('<run.db>', `run store written by \`echolens ${audit.command} run\``)
    .option('--run <id>', `run id (default: the latest ${audit.name} run in the store)`)
    .option('--format <format>', report.schema ? `md or json (schema: ${report.schema})` : 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout');
  report.flags?.(reportCommand);
  reportCommand.action(async (db: string, options: Options) => {
    const format = oneOf('--format', ['md', 'json'], options.format);
    // One read of the run and its cells for every part of the report (store/read-once.ts).
    await closing(readOnce(openStore(db, { readonly: true })), async (store) => {
      const runId = await auditRunId(store, audit.name, options.run);
      await requireCompleteRun(store, runId);
      emit(await reportText(store, audit, report, runId, await report.analyze(store, runId, options, true), format), options.out);
    });
  });

  if (hooks.calibrate) hooks.calibrate(group);
  else registerGenericCalibrate(group, audit);
  hooks.extra?.(group);
}

/** `<audit> calibrate` from the audit's `calibrate` member: each test's rejection rate over simulated runs. */
function registerGenericCalibrate(group: Command, audit: AnyAudit): void {
  const calibrate = audit.calibrate?.bind(audit);
  if (calibrate === undefined) return;
  group
    .command('calibrate')
    .description(`operating characteristics of the ${audit.name} audit's tests over simulated runs (false-positive rate, power, coverage)`)
    .addOption(numberOption('--replicates <n>', 'simulated runs', positiveInteger, 200))
    .addOption(numberOption('--seed <n>', 'seed of the simulation', positiveInteger, 42))
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .action(async (options) => {
      const format = oneOf('--format', ['md', 'json'], options.format);
      const result = await calibrate({ replicates: options.replicates, seed: options.seed });
      if (format === 'json') {
        emit(JSON.stringify(result, null, 2), options.out);
        return;
      }
      const rows = result.tests.map((t) => [text(t.test), num(t.rejection?.rate, 'integer'), num(t.rejection?.mcSE, 'integer')]);
      const blocks: DocumentBlock[] = [
        { kind: 'text', text: `${result.replicates} simulated runs.` },
        table(['test', 'rejection rate', 'Monte Carlo SE'], rows, [1, 2]),
        ...result.notes.map((note): DocumentBlock => ({ kind: 'text', text: note })),
      ];
      emit(documentMarkdown(`${audit.title}: calibration (simulated)`, [{ title: '', blocks }]), options.out);
    });
}
