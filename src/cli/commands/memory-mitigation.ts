import { mkdirSync, writeFileSync } from 'node:fs';
import { toJsonl } from '../../memory-drift/mitigation/export.js';
import { spendText } from '../../core/money.js';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { collect, finiteNumber, integerIn, oneOf, numberOption } from '../options.js';
import { SET_FLAG_HELP } from '../run-options.js';
import { sha256Hex } from '../../core/canonical-json.js';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { installStopSignals, openExperimentRun } from '../../experiment/runtime.js';
import { registerMitigationSimProfiles } from '../../memory-drift/mitigation/index.js';
import { loadDpoConfig } from '../../memory-drift/mitigation/dpo-config.js';
import { runDpoPairs, writeDpoOutputs } from '../../memory-drift/mitigation/dpo.js';
import { parseHeldOut, renderEvaluationMarkdown, runEvaluation } from '../../memory-drift/mitigation/evaluation.js';
import { runReferences } from '../../memory-drift/mitigation/references.js';
import { CachedLabeler } from '../../memory-drift/mitigation/reward-labeler.js';
import { startRewardServer } from '../../memory-drift/mitigation/reward-server.js';
import { loadPriceTable } from '../../models/prices.js';
import { countTokens } from '../../models/token-count.js';
import { lowerHelperThreads } from '../../memory-drift/mitigation/thread-priority.js';
import { type GrpoExport, type GrpoFormat, grpoPromptRows, splitByQuestion, type VerlPromptRow } from '../../memory-drift/mitigation/grpo-data.js';
import { buildTrainFiles, GRPO_PRESETS, TRAIN_ENGINES, type TrainEngine, trainConfigSchema } from '../../memory-drift/mitigation/train-config.js';
import { loadConfigFile } from '../../core/config-file.js';
import {
  checkRewardWeights,
  type DriftOrientation,
  parseReferences,
  REWARD_PRESETS,
  type RewardPreset,
  type RewardWeights,
  WEIGHT_KEYS,
  type WeightKey,
} from '../../memory-drift/mitigation/reward.js';
import { loadMemoryConfig, planMemoryGeneration, resolveMemoryStimuli } from '../../memory-drift/run.js';
import { loadBuiltinOntology, loadOntologyFile, ontologySymbols, UNMAPPED } from '../../memory-drift/ontology.js';
import { readInputText } from '../../core/user-files.js';

/** The run store's folder must exist before SQLite opens the file (default `runs/`). */
function ensureParent(file: string): string {
  mkdirSync(dirname(file), { recursive: true });
  return file;
}

/** A run that stopped early (budget, Ctrl-C): says so and exits with code 3 (the same command resumes it). */
export function stoppedEarly(message: string, stream: NodeJS.WriteStream = process.stdout): void {
  stream.write(`${message}\n`);
  process.exitCode = 3;
}

/** Help of the reward server's `--w-<weight>` flags (`antiDistraction` → `--w-anti-distraction`). */
const WEIGHT_FLAGS: Record<WeightKey, string> = {
  format: 'weight of r_fmt (format reward, eq. 9)',
  dtw: 'weight of r_dtw (−DTW, or 1 − DTW with --drift similarity)',
  sri: 'weight of r_sri (−SRI drift, or 1 − SRI; the DTW+SRI+fmt variant)',
  antiDistraction: 'weight of the anti-distraction reward (labels keep o*(x) in place and order; penalises unmapped steps and length change)',
  readability: 'weight of the readability reward (Gaussian around a target Flesch reading ease)',
  diversity: 'weight of the answer lexical-diversity reward (App. I.3)',
};
const weightFlag = (key: string) => `w-${key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;

const SIMS = '\nSimulated models (measure nothing): sim:memory (generator), sim:dpo-judge (judge), sim:dpo-rewriter (rewrite), sim:labeler (labeler).';

/** `echolens memory dpo-pairs | references | reward-server` (DriftLens §5, App. I). */
export function registerMemoryMitigation(memory: Command): void {
  registerMitigationSimProfiles();

  memory
    .command('dpo-pairs')
    .description(
      'DPO preference data (SymPreference): persona prompts, candidates, judge (h, d, a), selection, optional rewrite, mix with filtered external pairs; TRL + OpenRLHF exports and a data card',
    )
    .argument('<config>', 'YAML config (docs/mitigation.md; example: src/memory-drift/mitigation/__fixtures__/dpo-sim.yaml)')
    .option('--db <file>', 'run store (a SQLite file or a postgres:// URL): every call is a cached, resumable cell', 'runs/dpo.db')
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
        if (!result.complete) return stoppedEarly(`run ${result.runId} stopped early; run the same command again to resume (nothing written)`);
        const out = options.out ?? config.out;
        const card = writeDpoOutputs(out, result);
        const j = card.counts.judgements;
        process.stdout.write(
          `${result.resumed ? 'resumed' : 'started'} run ${result.runId}: ${card.counts.prompts} prompts, ${card.counts.candidates.done ?? 0} candidates; ` +
            `judged ${j.judged}, uncertain ${j.uncertain}, invalid ${j.invalid}; ${card.counts.sympreference_pairs} SymPreference pairs, ` +
            `mixed ${card.counts.mixed.total}, quick ${card.counts.quick_subset}; spend ${spendText(result.spendUsd, result.unpricedCells)}\nwrote ${out}/ (trl/, openrlhf/, data-card.json, data-card.md)\n`,
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
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .action(async (configFile: string, options) => {
      const config = loadDpoConfig(configFile, options.set);
      const ontology = options.ontology ? loadOntologyFile(options.ontology) : loadBuiltinOntology();
      const stop = installStopSignals();
      try {
        const result = await runDpoPairs(config, ensureParent(options.db), { signal: stop.signal, hardSignal: stop.hardSignal });
        if (!result.complete) return stoppedEarly('the candidate/judge stages stopped early; run the same command again to resume');
        const run = await runReferences({ labeler: options.labeler, ontology }, result, options.db, config.seed, {
          signal: stop.signal,
          hardSignal: stop.hardSignal,
        });
        if (run.interrupted) return stoppedEarly(`run ${run.runId} stopped early; run the same command again to resume (nothing written)`);
        const built = run.result;
        writeFileSync(ensureParent(options.out), toJsonl(built.references));
        process.stdout.write(`wrote ${built.references.length} references to ${options.out}; ${built.missing.length} questions without one\n`);
        for (const m of built.missing) process.stdout.write(`  ${m.question_id}: ${m.reason}\n`);
      } finally {
        stop.dispose();
      }
    });

  const rewardServer = memory
    .command('reward-server')
    .description(
      'GRPO reward server: R = w_fmt·r_fmt + w_dtw·r_dtw + w_sri·r_sri + anti-distraction, readability and answer-diversity rewards against o*(x); presets paper (r_fmt − DTW) and authors (0.5·(1 − DTW) + 0.5·r_fmt); endpoints for verl (/verl) and OpenRLHF --remote_rm_url (/openrlhf)',
    )
    .requiredOption('--references <file>', 'references JSONL ({"question_id", "symbols"} per line; `echolens memory references`)')
    .requiredOption('--labeler <model>', 'labeler model ref (e.g. sim:labeler)')
    .option('--port <n>', 'port (0 = any free port)', integerIn('--port', 0, 65535), 8787)
    .option('--host <host>', 'interface to listen on', '127.0.0.1')
    .option('--db <file>', 'run store for labeler cells (cache across restarts)', 'runs/reward.db')
    .option('--ontology <file>', 'ontology file (default: the built-in ontology)')
    .option('--preset <name>', `weights preset: ${Object.keys(REWARD_PRESETS).join(', ')} (see below); the --w-* flags override it`, 'paper');
  for (const [key, help] of Object.entries(WEIGHT_FLAGS)) rewardServer.addOption(numberOption(`--${weightFlag(key)} <w>`, help, finiteNumber));
  rewardServer
    .option('--drift <form>', "how DTW and SRI enter R: negative (−d, paper eq. 10) or similarity (1 − d, authors' code); default from the preset")
    .addOption(numberOption('--readability-target <fre>', 'Flesch reading ease at which the readability reward peaks', finiteNumber, 60))
    .addOption(numberOption('--readability-width <w>', 'width σ of the readability Gaussian', finiteNumber, 25))
    .option('--cache-size <n>', 'responses kept in the in-memory label cache', integerIn('--cache-size', 1, 10_000_000), 50_000)
    .option('--concurrency <n>', 'concurrent labeler calls', integerIn('--concurrency', 1, 1024))
    .option('--token <token>', 'require this token on every POST (Authorization: Bearer <token>); default: $ECHOLENS_REWARD_TOKEN')
    .option('--allow-host <host:port>', 'extra Host header value to accept (the name trainers use for a non-loopback bind); repeatable', collect, [])
    .option('--timeout-ms <ms>', 'deadline to receive and to answer one request', integerIn('--timeout-ms', 1000, 86_400_000), 120_000)
    .option(
      '--max-response-chars <n>',
      'longest response scored (longer ones are item errors, refused before any scoring)',
      integerIn('--max-response-chars', 1, 100_000_000),
      200_000,
    )
    .option(
      '--max-concurrent <n>',
      'scoring requests handled at once; one more gets 503 + Retry-After before its body is read',
      integerIn('--max-concurrent', 1, 1024),
      4,
    )

    .addHelpText(
      'after',
      "\nPresets: paper = 1·r_fmt + 1·(−DTW) (DriftLens eq. 8–10); authors = 0.5·r_fmt + 0.5·(1 − DTW) (the authors' released verl reward);\n" +
        "authors-sri = 0.2·r_fmt + 0.4·(1 − DTW) + 0.4·(1 − SRI) (their README's DTW+SRI variant). Add auxiliary rewards with\n" +
        '--w-anti-distraction, --w-readability (exp(−(FRE − 60)²/(2·25²))) and --w-diversity. docs/mitigation.md#auxiliary-rewards.',
    )
    .addHelpText(
      'after',
      '\nPOST /score {"items":[{"question_id","response"}]}; POST /verl {solution_str, ground_truth: question id}; POST /openrlhf {query, prompts, labels: question ids}; GET /health.\nOnly clients on this machine are served: a foreign Host header, a cross-site Origin or fetch gets 403; with --token every POST needs it.\nSee docs/mitigation.md for trainer configs. Ctrl-C or SIGTERM stops the server within 2 s.',
    )
    .action(async (options) => {
      const ontology = options.ontology ? loadOntologyFile(options.ontology) : loadBuiltinOntology();
      const text = readInputText(options.references, 'references');
      const references = parseReferences(text, options.references, new Set([...ontologySymbols(ontology), UNMAPPED]));
      if (!Object.hasOwn(REWARD_PRESETS, options.preset)) {
        throw new InvalidArgumentError('--preset', `must be one of ${Object.keys(REWARD_PRESETS).join(', ')}, got "${options.preset}"`);
      }
      if (options.drift !== undefined) oneOf('--drift', ['negative', 'similarity'], options.drift);
      const preset: RewardWeights = REWARD_PRESETS[options.preset as RewardPreset];
      // A flag overrides the preset (commander leaves an absent flag undefined).
      const weights = checkRewardWeights({
        ...(Object.fromEntries(WEIGHT_KEYS.map((k) => [k, options[`w${k[0]!.toUpperCase()}${k.slice(1)}`] ?? preset[k] ?? 0])) as Record<WeightKey, number>),
        drift: (options.drift as DriftOrientation | undefined) ?? preset.drift ?? 'negative',
        readabilityTarget: options.readabilityTarget,
        readabilityWidth: options.readabilityWidth,
      });
      const run = await openExperimentRun(ensureParent(options.db), 'memory-reward', { labeler: options.labeler, ontology, references: sha256Hex(text) }, 42, {
        weights,
      });
      const labeler = new CachedLabeler({
        store: run.store,
        runId: run.runId,
        labeler: options.labeler,
        ontology,
        cacheSize: options.cacheSize,
        ...(options.concurrency ? { runtime: { concurrency: options.concurrency } } : {}),
      });
      // First-use costs paid before listening, not inside the first request while /health waits:
      // the model adapters the runner imports lazily, the price table every labeler stage reads,
      // and a sim labeler's tokenizer tables (~20 MB, loaded synchronously on the first count).
      await import('../../models/index.js');
      loadPriceTable();
      if (options.labeler.startsWith('sim:')) countTokens('warm up');
      const token: string | undefined = options.token ?? (process.env.ECHOLENS_REWARD_TOKEN || undefined);
      const server = await startRewardServer({
        references,
        labeler,
        weights,
        host: options.host,
        port: options.port,
        requestTimeoutMs: options.timeoutMs,
        maxResponseChars: options.maxResponseChars,
        maxConcurrent: options.maxConcurrent,
        allowHosts: options.allowHost,
        ...(token === undefined ? {} : { token }),
      });
      // The V8 threads that collect the scoring workers' garbage run below the thread answering /health.
      lowerHelperThreads();
      const terms = WEIGHT_KEYS.filter((k) => weights[k] !== 0).map((k) => `${k} ${weights[k]}`);
      process.stdout.write(
        `reward server on ${server.url} (${references.size} references; preset ${options.preset}; weights ${terms.join(', ') || 'all 0'}; drift ${weights.drift})\n`,
      );
      if (!server.loopback && token === undefined) {
        process.stderr.write(
          "warning: listening beyond this machine without a token; anyone who can reach the port can spend the labeler's API key (set --token)\n",
        );
      }
      const onSignal = (handler: () => void) => {
        for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, handler);
      };
      await new Promise<void>((resolve) => onSignal(() => resolve()));
      // A second signal while closing ends the process at once.
      onSignal(() => process.exit(130));
      await server.close();
      await run.store.close();
      process.stdout.write(
        `stopped: ${server.stats.scored} responses scored, cache ${labeler.stats.memoryHits}/${labeler.stats.lookups} memory hits, ${labeler.stats.calls} labeler calls\n`,
      );
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
      const references = parseReferences(readInputText(options.references, 'references'), options.references);
      const models = (options.model as string[]).map((spec) => {
        const eq = spec.indexOf('=');
        if (eq <= 0) throw new InvalidArgumentError('--model', `expected name=file, got "${spec}"`);
        const file = spec.slice(eq + 1);
        return { name: spec.slice(0, eq), rows: parseHeldOut(readInputText(file, 'held-out responses'), file) };
      });
      const names = models.map((m) => m.name);
      const repeated = names.find((name, i) => names.indexOf(name) !== i);
      if (repeated !== undefined) throw new InvalidArgumentError('--model', `the name "${repeated}" is given twice (each model's stages are named after it)`);
      const run = await runEvaluation({ labeler: options.labeler, judge: options.judge ?? null, ontology }, { references, models }, ensureParent(options.db), {
        progress: false,
      });
      if (run.interrupted) return stoppedEarly(`run ${run.runId} stopped early; run the same command again to resume`, process.stderr);
      process.stdout.write(options.format === 'json' ? `${JSON.stringify(run.result, null, 2)}\n` : renderEvaluationMarkdown(run.result));
    });

  memory
    .command('grpo-data')
    .description('GRPO training prompts of a memory config (one per question × perturbation): verl Parquet or OpenRLHF JSONL, labelled for the reward server')
    .argument('<config>', 'memory run YAML config (questions, conditions, stimuli, injection, system prompt)')
    .requiredOption('--references <file>', 'reference trajectories o*(x) (JSONL from `memory references`); questions without one are left out')
    .option('--format <format>', 'verl (Parquet) or openrlhf (JSONL)', 'verl')
    .option('--inline-references', 'put the reference trajectory itself in the label (ground_truth / label) instead of the question id')
    .option('--data-source <name>', 'verl data_source', 'echolens-driftlens')
    .addOption(numberOption('--val-fraction <p>', 'share of questions held out for validation (paper: 0.2); 0 = no split', finiteNumber, 0))
    .option('--val-out <file>', 'validation file (default: <out> with -val before the extension)')
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .requiredOption('-o, --out <file>', 'output file (train.parquet for verl, prompts.jsonl for OpenRLHF)')
    .addHelpText(
      'after',
      '\nverl: Parquet with columns data_source, prompt (list of {content, role}), ability, reward_model {ground_truth, style: "rule"},\n' +
        'extra_info {index, question_id, condition, tier, stimulus_id}; ground_truth = the question id, or with --inline-references the\n' +
        'reference symbols as a JSON array string. OpenRLHF: JSONL rows {prompt: [messages], label} for --input_key prompt --label_key label\n' +
        '--apply_chat_template. --val-fraction splits by question (a question never lands on both sides). Score the rollouts with\n' +
        '`echolens memory reward-server` (/verl, /openrlhf); `echolens memory train-config` writes the launch files.',
    )
    .action(async (configFile: string, options) => {
      oneOf('--format', ['verl', 'openrlhf'], options.format);
      const format = options.format as GrpoFormat;
      const out = options.out as string;
      const [wrongName, writtenAs] =
        format === 'verl'
          ? [/\.jsonl?$/i, 'verl data is written as Parquet; name the file *.parquet']
          : [/\.parquet$/i, 'OpenRLHF data is written as JSON lines; name the file *.jsonl'];
      if (wrongName.test(out)) throw new InvalidArgumentError('--out', `${writtenAs}, not ${out}`);
      if (!(options.valFraction >= 0 && options.valFraction < 1))
        throw new InvalidArgumentError('--val-fraction', `must be in [0, 1), got ${options.valFraction}`);
      const references = parseReferences(readInputText(options.references, 'references'), options.references);
      const config = loadMemoryConfig(configFile, options.set);
      const stimuli = await resolveMemoryStimuli(config);
      const cells = planMemoryGeneration({ ...config, targets: [config.targets[0] as string] }, stimuli);
      const exported = grpoPromptRows(cells, references, {
        format,
        inline: Boolean(options.inlineReferences),
        dataSource: options.dataSource,
      });
      if (exported.rows.length === 0) {
        const hint = 'run `echolens memory references` on the same questions';
        throw new InputError(`no question of the config has a reference trajectory in ${options.references}; ${hint}`, { file: options.references });
      }
      const sides: Array<{ file: string; rows: GrpoExport['rows'] }> = [];
      if (options.valFraction > 0) {
        const split = splitByQuestion(exported.rows, options.valFraction);
        const valOut: string = options.valOut ?? out.replace(/(\.[^./\\]+)?$/, (ext) => `-val${ext}`);
        if (split.train.length === 0 || split.val.length === 0) {
          throw new InvalidArgumentError(
            '--val-fraction',
            `${options.valFraction} leaves ${split.train.length === 0 ? 'no training' : 'no validation'} question among ${exported.rows.length} prompts; use more questions or another fraction`,
          );
        }
        sides.push({ file: out, rows: split.train }, { file: valOut, rows: split.val });
      } else sides.push({ file: out, rows: exported.rows });
      // The Parquet writer loads only when verl data is written (every `memory` command loads this module).
      const { verlRowsToParquet } = format === 'verl' ? await import('../../memory-drift/mitigation/verl-parquet.js') : { verlRowsToParquet: null };
      for (const side of sides) {
        writeFileSync(ensureParent(side.file), verlRowsToParquet !== null ? verlRowsToParquet(side.rows as VerlPromptRow[]) : toJsonl(side.rows));
      }
      const left = exported.withoutReference.length > 0 ? `; ${exported.withoutReference.length} questions without a reference left out` : '';
      process.stderr.write(`wrote ${sides.map((s) => `${s.rows.length} ${format} prompts to ${s.file}`).join(', ')}${left}\n`);
    });

  memory
    .command('train-config')
    .description(
      "launch files for the trainers: GRPO with verl or OpenRLHF (pointing at grpo-data and the reward server), DPO with TRL (the dpo-pairs export), with the paper's or the authors' hyperparameters",
    )
    .argument('<config>', 'YAML: model, data {train, val?}, reward {url}, preset, grpo/dpo overrides (docs/mitigation.md#launch-files)')
    .requiredOption('--engine <engine>', `one of ${TRAIN_ENGINES.join(', ')}`)
    .requiredOption('-o, --out <file>', 'launch file: a shell script (verl, openrlhf; verl also writes echolens_reward.py beside it) or a Python script (trl)')
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .addHelpText(
      'after',
      `\nGRPO presets (verl, openrlhf): ${Object.keys(GRPO_PRESETS).join(', ')}. paper = App. I.2 (K 4, T 1.0, batch 8, 640/1024 tokens, KL 0.01, 3 epochs),\n` +
        "the values of the authors' Phi-4 and Gemma-2 scripts; authors-qwen3 = their Qwen3-4B script (KL 0.001, 640 response tokens, lr 3e-6).\n" +
        'DPO (trl): App. I.1 (sigmoid loss, lr 5e-6, 3 epochs, cosine, warmup 0.1, max length 1024, batch 1 × 16, ZeRO-3, bf16; β 0.1 = TRL default).\n' +
        'Each generated file lists every hyperparameter with its source. Training does not run here.',
    )
    .action((configFile: string, options) => {
      if (!(TRAIN_ENGINES as readonly string[]).includes(options.engine)) {
        throw new InvalidArgumentError('--engine', `must be one of ${TRAIN_ENGINES.join(', ')}, got "${options.engine}"`);
      }
      const { config } = loadConfigFile(configFile, trainConfigSchema, options.set);
      const files = buildTrainFiles(options.engine as TrainEngine, config);
      const out = options.out as string;
      const written = files.map((file) => {
        const path = file.name === '' ? out : join(dirname(out), file.name);
        writeFileSync(ensureParent(path), file.text, { mode: file.kind === 'shell' ? 0o755 : 0o644 });
        return path;
      });
      process.stdout.write(`wrote ${written.join(', ')} (${options.engine}, ${options.engine === 'trl' ? 'DPO' : `GRPO preset ${config.preset}`})\n`);
    });
}
