import type { Command } from 'commander';
import { runAuditCommand } from '../audit-run.js';
import { collect, emit, positiveNumber } from '../options.js';
import { InvalidArgumentError } from '../../core/errors.js';
import { openStore } from '../../store/run-store.js';
import { renderPersonaMarkdown } from '../../persona-drift/report-markdown.js';
import { personaAudit } from '../../persona-drift/audit.js';
import { loadPersonaConfig, personaConfigFromFlags, personaReport, personaRunId } from '../../persona-drift/run.js';

export function registerPersona(program: Command): void {
  const persona = program
    .command('persona')
    .description('persona drift (ContextEcho): snapshot real agentic sessions at positions and probe the assistant register');

  persona
    .command('run')
    .description('run the ContextEcho grid of a config: target cells, then judge cells (cached, resumable)')
    .argument('[config]', 'YAML config (see docs/persona-config.md); without one, --session, --target and --judge are enough and every other key takes its default')
    .option('--db <file>', 'run store (SQLite)', 'runs/persona.db')
    .option('--dry-run', 'print the plan size and the estimate (cells, tokens, dollars); call nothing')
    .option('--set <key=value>', 'override any config key (dotted path, YAML value); repeatable', collect, [])
    .option('--target <model>', 'replace the targets with this model ref; repeatable', collect, [])
    .option('--judge <model>', 'replace the judges with this model ref; repeatable', collect, [])
    .option('--session <file>', 'replace the sessions with this transcript; repeatable', collect, [])
    .option('--concurrency <n>', 'concurrent calls per provider', positiveNumber('--concurrency'))
    .option('--max-cost <usd>', 'stop before spending more than this', positiveNumber('--max-cost'))
    .option('--price-file <file>', 'prices overriding the built-in table (JSON or YAML)')
    .option('--report <file>', 'also write the Markdown report here when the run completes')
    .addHelpText(
      'after',
      '\nModel refs: openai:<model>, anthropic:<model>, vllm:, ollama:, llamacpp:, lmstudio:, openrouter:, together:,\nopenai-compatible:<model>@<baseURL>, local:<gguf>, replay:<run.db>, sim:<profile> (simulated, measures nothing).\nCtrl-C once: finish in-flight cells and stop (re-run the same command to resume). Twice: cancel them.',
    )
    .action(async (configFile: string | undefined, options) => {
      const overrides: string[] = [...options.set];
      const listOverride = (key: string, values: string[]) => {
        if (values.length > 0) overrides.push(`${key}=${JSON.stringify(values)}`);
      };
      listOverride('targets', options.target);
      listOverride('judges', options.judge);
      listOverride('sessions', options.session);
      const config = configFile === undefined ? personaConfigFromFlags(overrides) : loadPersonaConfig(configFile, overrides);
      const result = await runAuditCommand(personaAudit, config, options);
      if (result === null) return;
      if (options.report) {
        const store = openStore(options.db, { readonly: true });
        try {
          emit(renderPersonaMarkdown(personaReport(store, result.runId)), options.report);
        } finally {
          store.close();
        }
      }
      process.stdout.write(`report: echolens persona report ${options.db}\n`);
    });

  persona
    .command('report')
    .description('analyse a persona run: drift gaps with CIs, mitigations, stressors, contracts, compaction, agreement')
    .argument('<run.db>', 'run store written by `echolens persona run`')
    .option('--run <id>', 'run id (default: the latest persona run in the store)')
    .option('--format <format>', 'md or json (schema: docs/persona-report-schema.md)', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .option('--bootstrap <B>', 'bootstrap replicates (default: the config value, 10,000)', positiveNumber('--bootstrap'))
    .action((db: string, options) => {
      if (options.format !== 'md' && options.format !== 'json') {
        throw new InvalidArgumentError('--format', `must be md or json, got "${options.format}"`);
      }
      const store = openStore(db, { readonly: true });
      try {
        const runId = personaRunId(store, options.run);
        const report = personaReport(store, runId, options.bootstrap ? { B: Math.round(options.bootstrap) } : {});
        emit(options.format === 'json' ? JSON.stringify({ runId, ...report }, null, 2) : renderPersonaMarkdown(report), options.out);
      } finally {
        store.close();
      }
    });
}
