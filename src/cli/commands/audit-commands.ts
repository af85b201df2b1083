import type { Command } from 'commander';
import type { AnyAudit } from '../../experiment/audit.js';
import { analyzeAuditRun, auditRunId } from '../../experiment/analyze-run.js';
import { openStore } from '../../store/run-store.js';
import { readOnce } from '../../store/read-once.js';
import { runAuditCommand } from '../audit-run.js';
import { emit, oneOf, positiveInteger } from '../options.js';
import { reportEnvelope } from '../report-envelope.js';
import { auditMarkdown } from '../../report/document/render-markdown.js';
import { addConfigRunCommand, addLimitFlags, addMeasurementFlags, CTRL_C_HELP } from '../run-options.js';

/**
 * `echolens <audit> run | report | calibrate` made from a registered audit's members, for
 * every audit without a command group of its own (the built-in audits have theirs, with
 * their extra flags; see commands.ts). Everything here goes through the shared protocol:
 * `runAudit` for runs, `analyzeAuditRun` and the audit's renderers for reports (the same
 * path as `echolens report`), and the audit's `calibrate`.
 */
export function registerAuditCommands(group: Command, audit: AnyAudit): void {
  const run = addConfigRunCommand(
    group,
    `run the ${audit.title} audit of a config (cached, resumable)`,
    ['<config>', `YAML config (\`echolens schema ${audit.name}\` prints its JSON Schema)`],
    `runs/${audit.name}.db`,
  );
  addMeasurementFlags(addLimitFlags(run))
    .addHelpText('after', `\n${CTRL_C_HELP}`)
    .action(async (configFile: string, options) => {
      const overrides: string[] = [...options.set];
      if (options.target.length > 0) overrides.push(`targets=${JSON.stringify(options.target)}`);
      const result = await runAuditCommand(audit, audit.loadConfig(configFile, overrides), options);
      if (result === null) return;
      process.stdout.write(`report: echolens ${audit.command} report ${options.db} · gate: echolens gate ${options.db}\n`);
    });

  group
    .command('report')
    .description(`analyse a ${audit.name} run: the verdict, then the audit's report`)
    .argument('<run.db>', `run store written by \`echolens ${audit.command} run\``)
    .option('--run <id>', `run id (default: the latest ${audit.name} run in the store)`)
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .option('--bootstrap <B>', 'bootstrap replicates (default: the run config’s value)', positiveInteger('--bootstrap'))
    .action(async (db: string, options) => {
      const format = oneOf('--format', ['md', 'json'], options.format);
      const store = readOnce(openStore(db, { readonly: true }));
      try {
        const runId = await auditRunId(store, audit.name, options.run);
        const analyzed = await analyzeAuditRun(audit, store, await store.requireRun(runId), options.bootstrap ? { B: options.bootstrap } : {});
        const envelope = await reportEnvelope(store, runId, { [audit.name]: analyzed.report });
        emit(
          format === 'json'
            ? JSON.stringify({ runId, ...envelope.json, [audit.name]: audit.render.json(analyzed) }, null, 2)
            : envelope.markdown(auditMarkdown(audit, analyzed, `${audit.title} — ${runId}`)),
          options.out,
        );
      } finally {
        await store.close();
      }
    });

  const calibrate = audit.calibrate?.bind(audit);
  if (calibrate === undefined) return;
  group
    .command('calibrate')
    .description(`operating characteristics of the ${audit.name} audit's tests over simulated runs (false-positive rate, power, coverage)`)
    .option('--replicates <n>', 'simulated runs', positiveInteger('--replicates'), 200)
    .option('--seed <n>', 'seed of the simulation', positiveInteger('--seed'), 42)
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .action(async (options) => {
      const format = oneOf('--format', ['md', 'json'], options.format);
      const result = await calibrate({ replicates: options.replicates, seed: options.seed });
      if (format === 'json') {
        emit(JSON.stringify(result, null, 2), options.out);
        return;
      }
      const lines = [`# ${audit.title}: calibration (simulated)`, '', `${result.replicates} simulated runs.`, ''];
      lines.push('| test | rejection rate | Monte Carlo SE |', '|---|---|---|');
      for (const t of result.tests) lines.push(`| ${t.test} | ${t.rejection?.rate ?? '—'} | ${t.rejection?.mcSE ?? '—'} |`);
      lines.push('', ...result.notes);
      emit(lines.join('\n'), options.out);
    });
}
