import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import type { Command } from 'commander';
import { collect, finiteNumber, integerIn, oneOf } from '../options.js';
import { SET_FLAG_HELP } from '../run-options.js';
import { sha256Hex } from '../../core/canonical-json.js';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { installStopSignals, openExperimentRun } from '../../experiment/runtime.js';
import { registerMitigationSimProfiles } from '../../memory-drift/mitigation/sims.js';
import { loadDpoConfig } from '../../memory-drift/mitigation/dpo-config.js';
import { runDpoPairs, writeDpoOutputs } from '../../memory-drift/mitigation/dpo.js';
import { evaluateHeldOut, parseHeldOut, renderEvaluationMarkdown } from '../../memory-drift/mitigation/evaluation.js';
import { buildReferences } from '../../memory-drift/mitigation/references.js';
import { CachedLabeler } from '../../memory-drift/mitigation/reward-labeler.js';
import { startRewardServer } from '../../memory-drift/mitigation/reward-server.js';
import { grpoPromptRows } from '../../memory-drift/mitigation/grpo-data.js';
import { checkRewardWeights, parseReferences } from '../../memory-drift/mitigation/reward.js';
import { loadMemoryConfig, planMemoryGeneration, resolveMemoryStimuli } from '../../memory-drift/run.js';
import { loadBuiltinOntology, loadOntologyFile, ontologySymbols, UNMAPPED } from '../../memory-drift/ontology.js';

/** A file's text; a file that cannot be read is an input error saying what it was for. */
function readInput(file: string, what: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch (error) {
    throw new InputError(`cannot read ${what}: ${(error as Error).message}`, { file });
  }
}

/** The run store's folder must exist before SQLite opens the file (default `runs/`). */
function ensureParent(file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  return file;
}

const SIMS =
  '\nSimulated models (measure nothing): sim:memory (generator), sim:dpo-judge (judge), sim:dpo-rewriter (rewrite), sim:labeler (labeler).';

/** `echolens memory dpo-pairs | references | reward-server` (DriftLens §5, App. I). */
export function registerMemoryMitigation(memory: Command): void {
  registerMitigationSimProfiles();

  memory
    .command('dpo-pairs')
    .description('DPO preference data (SymPreference): persona prompts, candidates, judge (h, d, a), selection, optional rewrite, mix with filtered external pairs; TRL + OpenRLHF exports and a data card')
    .argument('<config>', 'YAML config (docs/mitigation.md; example: src/memory-drift/mitigation/__fixtures__/dpo-sim.yaml)')
    .option('--db <file>', 'run store (SQLite): every call is a cached, resumable cell', 'runs/dpo.db')
    .option('--out <dir>', 'output folder (overrides the config `out`)')
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .option('--concurrency <n>', 'concurrent calls per provider', integerIn('--concurrency', 1, 1024))
    .addHelpText('after', `${SIMS}\nThe same config and --db resume: finished cells are never called again. Exit code 3: stopped early (re-run to resume).`)
    .action(async (configFile: string, options) => {
      const config = loadDpoConfig(configFile, options.set);
      const stop = installStopSignals();
      try {
        const result = await runDpoPairs(config, ensureParent(options.db), {
          signal: stop.signal,
          hardSignal: stop.hardSignal,
          ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        });
        if (!result.complete) {
          process.stdout.write(`run ${result.runId} stopped early; run the same command again to resume (nothing written)\n`);
          process.exitCode = 3;
          return;
        }
        const out = options.out ?? config.out;
        const card = writeDpoOutputs(out, result);
        const j = card.counts.judgements;
        process.stdout.write(
          `${result.resumed ? 'resumed' : 'started'} run ${result.runId}: ${card.counts.prompts} prompts, ${card.counts.candidates.done ?? 0} candidates; ` +
            `judged ${j.judged}, uncertain ${j.uncertain}, invalid ${j.invalid}; ${card.counts.sympreference_pairs} SymPreference pairs, ` +
            `mixed ${card.counts.mixed.total}, quick ${card.counts.quick_subset}; spend $${result.spendUsd.toFixed(4)}\nwrote ${out}/ (trl/, openrlhf/, data-card.json, data-card.md)\n`,
        );
      } finally {
        stop.dispose();
      }
    });

  memory
    .command('references')
    .description('GRPO reference trajectories o*(x): the judge-selected best candidate per question of a dpo-pairs config, labelled once → JSONL')
    .argument('<config>', 'the dpo-pairs YAML config (its generator is the base policy)')
    .requiredOption('--labeler <model>', 'labeler model ref (e.g. sim:labeler)')
    .option('--db <file>', 'run store (shared with dpo-pairs: candidates and judgements are reused)', 'runs/dpo.db')
    .option('--ontology <file>', 'ontology file (default: the built-in ontology)')
    .option('-o, --out <file>', 'references JSONL', 'references.jsonl')
    .option('--set <key=value>', 'override any config key; repeatable', collect, [])
    .action(async (configFile: string, options) => {
      const config = loadDpoConfig(configFile, options.set);
      const ontology = options.ontology ? loadOntologyFile(options.ontology) : loadBuiltinOntology();
      const stop = installStopSignals();
      try {
        const result = await runDpoPairs(config, ensureParent(options.db), { signal: stop.signal, hardSignal: stop.hardSignal });
        if (!result.complete) {
          process.stdout.write('the candidate/judge stages stopped early; run the same command again to resume\n');
          process.exitCode = 3;
          return;
        }
        const run = openExperimentRun(options.db, 'memory-references', { labeler: options.labeler, ontology }, config.seed);
        try {
          const labeler = new CachedLabeler({ store: run.store, runId: run.runId, labeler: options.labeler, ontology, runtime: { signal: stop.signal } });
          const built = await buildReferences(result.prompts, result.candidates, labeler);
          mkdirSync(dirname(options.out), { recursive: true });
          writeFileSync(options.out, built.references.map((r) => JSON.stringify(r)).join('\n') + (built.references.length > 0 ? '\n' : ''));
          process.stdout.write(`wrote ${built.references.length} references to ${options.out}; ${built.missing.length} questions without one\n`);
          for (const m of built.missing) process.stdout.write(`  ${m.question_id}: ${m.reason}\n`);
        } finally {
          run.store.close();
        }
      } finally {
        stop.dispose();
      }
    });

  memory
    .command('reward-server')
    .description('GRPO reward server: R = w_fmt·r_fmt − w_dtw·DTW − w_sri·SRI against o*(x) (paper: 1, 1, 0); endpoints for verl (/verl) and OpenRLHF --remote_rm_url (/openrlhf)')
    .requiredOption('--references <file>', 'references JSONL ({"question_id", "symbols"} per line; `echolens memory references`)')
    .requiredOption('--labeler <model>', 'labeler model ref (e.g. sim:labeler)')
    .option('--port <n>', 'port (0 = any free port)', integerIn('--port', 0, 65535), 8787)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--db <file>', 'run store for labeler cells (cache across restarts)', 'runs/reward.db')
    .option('--ontology <file>', 'ontology file (default: the built-in ontology)')
    .option('--w-format <w>', 'weight of r_fmt', finiteNumber('--w-format'), 1)
    .option('--w-dtw <w>', 'weight of r_dtw = −DTW', finiteNumber('--w-dtw'), 1)
    .option('--w-sri <w>', 'weight of r_sri = −SRI drift (DTW+SRI+fmt variant)', finiteNumber('--w-sri'), 0)
    .option('--cache-size <n>', 'responses kept in the in-memory label cache', integerIn('--cache-size', 1, 10_000_000), 50_000)
    .option('--concurrency <n>', 'concurrent labeler calls', integerIn('--concurrency', 1, 1024))
    .option('--token <token>', 'require this token on every POST (Authorization: Bearer <token>); default: $ECHOLENS_REWARD_TOKEN')
    .option('--allow-host <host:port>', 'extra Host header value to accept (the name trainers use for a non-loopback bind); repeatable', collect, [])
    .option('--timeout-ms <ms>', 'deadline to receive and to answer one request', integerIn('--timeout-ms', 1000, 86_400_000), 120_000)
    .option('--max-response-chars <n>', 'longest response scored (longer ones are item errors)', integerIn('--max-response-chars', 1, 100_000_000), 1_000_000)
    .addHelpText('after', '\nPOST /score {"items":[{"question_id","response"}]}; POST /verl {solution_str, ground_truth: question id}; POST /openrlhf {query, prompts, labels: question ids}; GET /health.\nOnly clients on this machine are served: a foreign Host header, a cross-site Origin or fetch gets 403; with --token every POST needs it.\nSee docs/mitigation.md for trainer configs. Ctrl-C or SIGTERM stops the server within 2 s.')
    .action(async (options) => {
      const ontology = options.ontology ? loadOntologyFile(options.ontology) : loadBuiltinOntology();
      const text = readInput(options.references, 'references');
      const references = parseReferences(text, options.references, new Set([...ontologySymbols(ontology), UNMAPPED]));
      const weights = checkRewardWeights({ format: options.wFormat, dtw: options.wDtw, sri: options.wSri });
      const run = openExperimentRun(ensureParent(options.db), 'memory-reward', { labeler: options.labeler, ontology, references: sha256Hex(text) }, 42, { weights });
      const labeler = new CachedLabeler({
        store: run.store,
        runId: run.runId,
        labeler: options.labeler,
        ontology,
        cacheSize: options.cacheSize,
        ...(options.concurrency ? { runtime: { concurrency: options.concurrency } } : {}),
      });
      const token: string | undefined = options.token ?? (process.env.ECHOLENS_REWARD_TOKEN || undefined);
      const server = await startRewardServer({
        references,
        labeler,
        weights,
        host: options.host,
        port: options.port,
        requestTimeoutMs: options.timeoutMs,
        maxResponseChars: options.maxResponseChars,
        allowHosts: options.allowHost,
        ...(token === undefined ? {} : { token }),
      });
      process.stdout.write(`reward server on ${server.url} (${references.size} references; weights fmt ${weights.format}, dtw ${weights.dtw}, sri ${weights.sri})\n`);
      if (!server.loopback && token === undefined) {
        process.stderr.write('warning: listening beyond this machine without a token; anyone who can reach the port can spend the labeler\'s API key (set --token)\n');
      }
      await new Promise<void>((resolve) => {
        const stop = () => resolve();
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      });
      // A second signal while closing ends the process at once.
      const force = () => process.exit(130);
      process.once('SIGINT', force);
      process.once('SIGTERM', force);
      await server.close();
      run.store.close();
      process.stdout.write(`stopped: ${server.stats.scored} responses scored, cache ${labeler.stats.memoryHits}/${labeler.stats.lookups} memory hits, ${labeler.stats.calls} labeler calls\n`);
    });

  memory
    .command('evaluate')
    .description('Table 2 columns on held-out responses: mean DTW vs o*(x), lexical diversity, judge helpfulness (uncertain excluded)')
    .requiredOption('--references <file>', 'references JSONL')
    .requiredOption('--labeler <model>', 'labeler model ref')
    .requiredOption('--model <name=file>', 'held-out JSONL of one model ({question_id, question, persona?, response}); repeat: base first', collect, [])
    .option('--judge <model>', 'helpfulness judge model ref (omit: no helpfulness column)')
    .option('--db <file>', 'run store for labeler and judge cells', 'runs/evaluate.db')
    .option('--ontology <file>', 'ontology file (default: the built-in ontology)')
    .option('--format <format>', 'md or json', 'md')
    .action(async (options) => {
      oneOf('--format', ['md', 'json'], options.format);
      const ontology = options.ontology ? loadOntologyFile(options.ontology) : loadBuiltinOntology();
      const references = parseReferences(readInput(options.references, 'references'), options.references);
      const models = (options.model as string[]).map((spec) => {
        const eq = spec.indexOf('=');
        if (eq <= 0) throw new InvalidArgumentError('--model', `expected name=file, got "${spec}"`);
        const file = spec.slice(eq + 1);
        return { name: spec.slice(0, eq), rows: parseHeldOut(readInput(file, 'held-out responses'), file) };
      });
      const run = openExperimentRun(ensureParent(options.db), 'memory-evaluate', { labeler: options.labeler, judge: options.judge ?? null, ontology }, 42);
      try {
        const labeler = new CachedLabeler({ store: run.store, runId: run.runId, labeler: options.labeler, ontology });
        const summaries = [];
        for (const model of models) {
          summaries.push(
            await evaluateHeldOut(model.name, model.rows, { references, labeler, store: run.store, runId: run.runId, ...(options.judge ? { judge: options.judge } : {}) }),
          );
        }
        process.stdout.write(options.format === 'json' ? `${JSON.stringify(summaries, null, 2)}\n` : renderEvaluationMarkdown(summaries));
      } finally {
        run.store.close();
      }
    });

  memory
    .command('grpo-data')
    .description('GRPO training prompts of a memory config (one per question × perturbation) as verl or OpenRLHF prompt JSONL, labelled for the reward server')
    .argument('<config>', 'memory run YAML config (questions, conditions, stimuli, injection, system prompt)')
    .requiredOption('--references <file>', 'reference trajectories o*(x) (JSONL from `memory references`); questions without one are left out')
    .option('--format <format>', 'verl or openrlhf', 'verl')
    .option('--inline-references', 'put the reference trajectory itself in the label (ground_truth / label) instead of the question id')
    .option('--data-source <name>', 'verl data_source', 'echolens-driftlens')
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .requiredOption('-o, --out <file>', 'output JSONL')
    .addHelpText(
      'after',
      '\nverl rows: {data_source, prompt: [messages], ability, reward_model: {style: "rule", ground_truth}, extra_info} (convert to parquet with\n' +
        'pandas if your verl version reads parquet only); OpenRLHF rows: {prompt: [messages], label} for --input_key prompt --label_key label\n' +
        '--apply_chat_template. Score the rollouts with `echolens memory reward-server` (/verl, /openrlhf).',
    )
    .action(async (configFile: string, options) => {
      oneOf('--format', ['verl', 'openrlhf'], options.format);
      const references = parseReferences(readInput(options.references, 'references'), options.references);
      const config = loadMemoryConfig(configFile, options.set);
      const stimuli = await resolveMemoryStimuli(config);
      const cells = planMemoryGeneration({ ...config, targets: [config.targets[0] as string] }, stimuli);
      const exported = grpoPromptRows(cells, references, {
        format: options.format,
        inline: Boolean(options.inlineReferences),
        dataSource: options.dataSource,
      });
      if (exported.rows.length === 0) {
        throw new InputError(`no question of the config has a reference trajectory in ${options.references}; run \`echolens memory references\` on the same questions`, {
          file: options.references,
        });
      }
      writeFileSync(ensureParent(options.out), `${exported.rows.map((row) => JSON.stringify(row)).join('\n')}\n`);
      process.stderr.write(
        `wrote ${exported.rows.length} ${options.format} prompts to ${options.out}${exported.withoutReference.length > 0 ? `; ${exported.withoutReference.length} questions without a reference left out` : ''}\n`,
      );
    });
}
