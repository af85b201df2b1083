import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { closing } from '../../core/closing.js';
import { ConfigError, InvalidArgumentError } from '../../core/errors.js';
import { spendText } from '../../core/money.js';
import type { MemoryReport } from '../../memory-drift/analysis.js';
import { aggregateAnnotations, buildOrthogonalityItems, exportAnnotationSheet, parseAnnotationSheet } from '../../memory-drift/annotations.js';
import { memoryAudit } from '../../memory-drift/audit.js';
import { calibrateMemoryDesign } from '../../memory-drift/calibrate.js';
import type { MemoryConfig } from '../../memory-drift/config.js';
import { compileCurationMatcher, curateQuestion, loadBuiltinCurationKeywords } from '../../memory-drift/curation.js';
import { readDataFile } from '../../memory-drift/data-files.js';
import { renderLabelerCheckMarkdown, renderMemoryCalibrationMarkdown, renderMemoryMarkdown } from '../../memory-drift/document.js';
import {
  analyzeMemoryCollection,
  collectLabelerCheck,
  collectMemorySamples,
  type MemoryCollection,
  memoryRunId,
  memoryRunSetup,
  relabelItems,
} from '../../memory-drift/observations.js';
import { listStimuli, loadBuiltinPerturbations } from '../../memory-drift/perturbations.js';
import { loadBuiltinQuestions, loadQuestionsFile, type Question } from '../../memory-drift/questions.js';
import { memoryReferenceMetric, renderReferenceMetricMarkdown } from '../../memory-drift/reference-metric.js';
import { labelerReliability } from '../../memory-drift/reliability.js';
import {
  type LabelerCheckConfig,
  labelerCheckPasses,
  loadMemoryConfig,
  type MemoryRunCounts,
  type MemoryRunResult,
  type RaterOutcome,
  resolveMemoryStimuli,
  runLabelerCheck,
  runQuestionRater,
} from '../../memory-drift/run.js';
import { openStore, type RunStore } from '../../store/run-store.js';
import { memoryHeadlines } from '../headline.js';
import { checkedNumber, collect, emit, oneOf, positiveInteger, positiveNumber } from '../options.js';
import { CTRL_C_HELP, MODEL_REF_FORMS, SET_FLAG_HELP } from '../run-options.js';
import { type AuditCommandHooks, registerAuditCommands } from './audit-commands.js';
import { registerMemoryLabelSheet } from './memory-label-sheet.js';
import { stoppedEarly } from './memory-mitigation.js';

const checkFormat = (format: string) => oneOf('--format', ['md', 'json'], format);

const MODEL_REFS = `\n${MODEL_REF_FORMS}:\nsim:memory plants drift by tier, sim:memory-null ignores memory, sim:labeler labels sim steps).`;

interface CurationRow {
  id: string;
  domain: string;
  text: string;
  keywordVerdict: 'keep' | 'drop' | 'review';
  keep: Array<{ group: string; phrase: string }>;
  drop: Array<{ group: string; phrase: string }>;
  rater?: RaterOutcome;
  /** keep: passes every filter applied; drop: a filter removed it (see reason); review: undecided. */
  decision: 'keep' | 'drop' | 'review';
  reason: string;
}

function curationDecision(row: Omit<CurationRow, 'decision' | 'reason'>): Pick<CurationRow, 'decision' | 'reason'> {
  if (row.keywordVerdict === 'drop') {
    return { decision: 'drop', reason: `drop-list: ${row.drop.map((h) => `${h.group} "${h.phrase}"`).join(', ')}` };
  }
  const keepReason = row.keep.length > 0 ? `keep signal: ${row.keep.map((h) => `${h.group} "${h.phrase}"`).join(', ')}` : 'no keyword signal';
  if (row.rater === undefined) return { decision: row.keywordVerdict, reason: keepReason };
  if (row.rater.status === 'rated') {
    return row.rater.verdict.keep
      ? { decision: 'keep', reason: `${keepReason}; rater: all four properties` }
      : {
          decision: 'drop',
          reason: `rater: not ${row.rater.verdict.failed.join(', not ')}${row.rater.verdict.rationale ? ` (${row.rater.verdict.rationale})` : ''}`,
        };
  }
  return { decision: 'review', reason: `${keepReason}; rater ${row.rater.status}: ${row.rater.status === 'invalid' ? row.rater.error : row.rater.reason}` };
}

/** Reads a run store opened read-only, closing it afterwards. */
const readStore = <T>(db: string, read: (store: RunStore) => Promise<T>): Promise<T> => closing(openStore(db, { readonly: true }), read);

/**
 * Why a finished run has nothing to analyse (every answer unusable, or every labeling invalid),
 * with what to change; null when something is usable.
 */
export async function unusableStage(result: Pick<MemoryRunResult, 'runId'> & MemoryRunCounts, db: string): Promise<string | null> {
  if (result.generationCells === 0) return null;
  if (result.labelerItems === 0) {
    return (
      `no generation produced an answer with steps to label (${result.emptyGenerations} empty, ${result.failedGenerations} failed, ` +
      `${result.refusals} refused, ${result.noSteps} without steps of ${result.generationCells}): check the target model references and the provider, ` +
      'raise decoding.maxTokens if answers are cut, or use a system prompt that asks for <step_N> steps'
    );
  }
  const usable = result.labelerItems - result.invalidLabelings - result.unansweredLabelings;
  if (usable > 0) return null;
  const failures = await readStore(db, async (store) => (await collectMemorySamples(store, result.runId)).summary.labelerFailures);
  const reasons =
    Object.entries(failures)
      .sort((a, b) => b[1] - a[1])
      .map(([reason, count]) => `${reason} ${count}`)
      .join(', ') || 'the labeler calls failed or came back empty';
  return (
    `every labeling of run ${result.runId} is unusable (${result.invalidLabelings} invalid after re-asks, ${result.unansweredLabelings} unanswered; ${reasons}): ` +
    'check the labeler model, raise labelerDecoding.maxTokens (cut JSON), lower steps.maxSteps, or set unknownLabel: unmapped'
  );
}

/** What `memory report` prints: the analysis, the collection it read and the reference metric (when the config asks for it). */
interface MemoryReportParts {
  report: MemoryReport;
  collection: MemoryCollection;
  reference: Awaited<ReturnType<typeof memoryReferenceMetric>>;
}

/** `memory run` and `memory report`: the generated pair with memory's own flags, and its headline after a run. */
function memoryCommandHooks(): AuditCommandHooks<MemoryConfig, MemoryReportParts> {
  return {
    run: {
      description: 'run the DriftLens grid of a config: generation cells, step extraction, labeler cells with re-asks (cached, resumable)',
      config: ['<config>', 'YAML config (see docs/memory-config.md; example: examples/memory-sim.yaml)'],
      defaultDb: 'runs/memory.db',
      dryRunHelp:
        'print the plan size, the minimum detectable effect and power of the validity tests (UNDERPOWERED with the questions to add) and the estimate (cells, tokens, dollars); call nothing',
      flags: (run) =>
        run
          .option('--labeler <model>', 'replace the labeler')
          .option('--questions-limit <n>', 'use only the first n questions (after the config’s filters)', positiveInteger('--questions-limit')),
      concurrency: positiveInteger('--concurrency'),
      materials: 'DriftLens',
      lateFlags: (run) =>
        run.option(
          '--identity-includes-url',
          'key cells by the whole model reference, base URL included (config identity: url; default: provider + model name)',
        ),
      helpAfter: `${MODEL_REFS}\nThe same config and --db resume the same run: finished cells are never called again.\n${CTRL_C_HELP}\nExit code 3: the run stopped early (budget or Ctrl-C). Exit code 1: the run finished but produced nothing to analyse\n(no answer with steps, or every labeling invalid); the message says why and what to change.`,
      overrides: (options) => [
        ...(options.labeler ? [`labeler=${JSON.stringify(options.labeler)}`] : []),
        ...(options.questionsLimit ? [`questions.limit=${options.questionsLimit}`] : []),
        ...(options.identityIncludesUrl ? ['identity=url'] : []),
      ],
      unusable: (run, db) => unusableStage({ runId: run.runId, ...(run.result as MemoryRunCounts) }, db),
      headline: (parts, simulated) => memoryHeadlines(parts.report, simulated),
    },
    report: {
      description: 'analyse a memory run: mixed model, d_rel with cluster-bootstrap CIs, elevation, Welch letters, validity verdicts',
      schema: 'docs/memory-report-schema.md',
      flags: (report) =>
        report
          .option('--bootstrap <B>', 'bootstrap replicates (default: the config value, 10,000)', positiveInteger('--bootstrap'))
          .option('--pairing <policy>', 'reference (no-memory sample 0, default) or all-pairs (every no-memory sample)', (v: string) =>
            oneOf('--pairing', ['reference', 'all-pairs'], v),
          ),
      analyze: async (store, runId, options, forReport) => {
        // One collection, analysed by the same function as the audit's `analyze` (echolens report, gate, viewer).
        const collection = await collectMemorySamples(store, runId);
        const report = analyzeMemoryCollection(collection, {
          ...(options.bootstrap ? { B: options.bootstrap } : {}),
          ...(options.pairing ? { pairing: options.pairing } : {}),
        });
        // Only when the run's config has referenceMetric (docs/decisions.md#d5, comparison only); never for the headline alone.
        return { report, collection, reference: forReport ? await memoryReferenceMetric(store, runId) : null };
      },
      gated: (parts) => parts.report,
      markdown: ({ report, collection, reference }, runId) =>
        `${renderMemoryMarkdown(report, undefined, { runId, collection })}${reference ? `\n${renderReferenceMetricMarkdown(reference)}` : ''}`,
      json: ({ report, collection, reference }) => ({ ...report, run: collection.summary, ...(reference ? { referenceMetric: reference } : {}) }),
    },
    calibrate: registerMemoryCalibrate,
    extra: (memory) => {
      registerMemoryCurate(memory);
      registerMemoryLabelerCheck(memory);
      registerMemoryLabelSheet(memory);
    },
  };
}

/** `memory calibrate`: the design's error rates and power under simulation, before any call. */
function registerMemoryCalibrate(memory: Command): void {
  memory
    .command('calibrate')
    .description(
      'simulate a config’s exact design under a null and planted effects: false-positive rate, CI coverage and power of every test of the report, before any call',
    )
    .argument('<config>', 'YAML config of `memory run` (targets and labeler are not called)')
    .option('--replicates <n>', 'simulated runs per scenario (200 gives a false-positive rate within about ±3 points)', positiveInteger('--replicates'), 200)
    .option(
      '--seed <n>',
      'seed of the simulation (default: the config seed)',
      checkedNumber('--seed', (n) => Number.isSafeInteger(n) && n >= 0, 'a non-negative integer'),
    )
    .option('--bootstrap <B>', 'bootstrap replicates per simulated report (default: the config B, at most 500)', positiveInteger('--bootstrap'))
    .option('--noise <p>', 'per-step sampling noise of the simulated sampler (default 0.2)', positiveNumber('--noise'))
    .option('--set <key=value>', SET_FLAG_HELP, collect, [])
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .addHelpText(
      'after',
      '\nA seed-honouring simulated sampler (same seed + same question = same answer, like a seeded vLLM) stands in for every target;\n' +
        'the real planner, seed derivation, scoring and analysis run on its answers. Scenario null: memory changes nothing, every\n' +
        'rejection is a false positive. Scenario planted: memory flips a step with probability 0.15 (persona) and 0.3 (life events).\n' +
        'Reported per test: false-positive rate with its Monte Carlo SE, 95 % CI coverage, power, and the minimum detectable\n' +
        'elevation and d_rel at 80 % power. Simulated: it measures the design, never a model.',
    )
    .action(async (configFile: string, options) => {
      const format = checkFormat(options.format);
      if (options.noise !== undefined && !(options.noise < 1)) throw new InvalidArgumentError('--noise', 'must be below 1');
      const config = loadMemoryConfig(configFile, options.set);
      const stimuli = await resolveMemoryStimuli(config);
      const calibration = calibrateMemoryDesign(config, stimuli, {
        replicates: options.replicates,
        ...(options.seed !== undefined ? { seed: options.seed } : {}),
        ...(options.bootstrap ? { B: options.bootstrap } : {}),
        ...(options.noise !== undefined ? { samplingNoise: options.noise } : {}),
        onReplicate: (scenario, done, total) => {
          if (process.stderr.isTTY) process.stderr.write(`\r${scenario}: ${done}/${total}${done === total ? '\n' : ''}`);
        },
      });
      emit(format === 'json' ? JSON.stringify(calibration, null, 2) : renderMemoryCalibrationMarkdown(calibration), options.out);
    });
}

/** `memory curate --import`: three annotators' filled sheets combined into the unanimous and two-of-three sets. */
function combineAnnotatorSheets(options: { import: string[]; minConfidence?: number; out?: string }): void {
  const files: string[] = options.import;
  if (files.length !== 3) throw new InvalidArgumentError('--import', `needs three annotators' sheets, got ${files.length}`);
  if (options.minConfidence !== undefined && !(options.minConfidence >= 0 && options.minConfidence <= 1)) {
    throw new InvalidArgumentError('--min-confidence', 'must be a number from 0 to 1');
  }
  const sheets = files.map((file, index) => parseAnnotationSheet(readDataFile(file).text, `annotator-${index + 1}`, file));
  const summary = aggregateAnnotations(sheets, options.minConfidence === undefined ? {} : { minMeanConfidence: options.minConfidence });
  process.stdout.write(
    `${summary.items.length} items: ${summary.unanimous.length} unanimous (3/3), ${summary.twoOfThree.length} two-of-three; disagreement rate ${(100 * summary.disagreementRate).toFixed(1)}%\n`,
  );
  if (options.out) emit(JSON.stringify({ files, minMeanConfidence: options.minConfidence ?? null, ...summary }, null, 2), options.out);
}

/** `memory curate`: screen candidate questions; or combine three annotators' sheets (--import). */
function registerMemoryCurate(memory: Command): void {
  memory
    .command('curate')
    .description('screen candidate questions (App. A): keyword keep-signals and drop-lists with reasons, optional LLM rater cells, human annotation sheets')
    .option('--questions <file>', 'candidate questions (.csv with a question/text column, or .jsonl); default: the built-in set')
    .option('--rater <model>', 'also rate each question not dropped by keywords on the four properties (cells, re-asked)')
    .option('--rate-all', 'rate the questions the keywords dropped too')
    .option('--db <file>', 'run store for the rater cells', 'runs/memory-curate.db')
    .option('--max-cost <usd>', 'stop the rater before spending more than this', positiveNumber('--max-cost'))
    .option('-o, --out <file>', 'write one JSON line per question (decision, reason, matches, rater verdict); with --import, the JSON summary')
    .option('--export-sheet <file>', 'write a blank annotation sheet (CSV) of the questions not dropped')
    .option('--orthogonality-sheet <file>', 'write a blank persona-orthogonality sheet (App. B.2) of the questions not dropped')
    .option('--import <files...>', "combine three annotators' filled sheets (CSV) into the unanimous and two-of-three sets")
    .option('--min-confidence <c>', 'with --import: keep only items whose mean confidence is above c (App. B.2 uses 0.58)', Number)
    .addHelpText(
      'after',
      '\nDecisions: drop = a drop-list phrase matched (Table 8) or the rater found a property missing; keep = a keep signal (Table 7) and no drop,\nand the rater (if any) found all four properties; review = undecided (no keyword signal, or the rater output stayed invalid).',
    )
    .action(async (options) => {
      if (options.import) {
        combineAnnotatorSheets(options);
        return;
      }
      const set = options.questions ? loadQuestionsFile(options.questions) : loadBuiltinQuestions();
      const matcher = compileCurationMatcher(loadBuiltinCurationKeywords());
      const base = set.questions.map((q: Question) => {
        const result = curateQuestion(q.text, matcher);
        return {
          id: q.id,
          domain: q.domain,
          text: q.text,
          keywordVerdict: result.verdict,
          keep: result.keep.map(({ group, phrase }) => ({ group, phrase })),
          drop: result.drop.map(({ group, phrase }) => ({ group, phrase })),
        };
      });
      let raterNote = '';
      const rated = new Map<string, RaterOutcome>();
      if (options.rater) {
        const toRate = set.questions.filter((_, i) => options.rateAll || base[i]!.keywordVerdict !== 'drop');
        const result = await runQuestionRater(options.db, toRate, options.rater, options.maxCost ? { maxCostUsd: options.maxCost } : {});
        for (const [id, outcome] of result.outcomes) rated.set(id, outcome);
        raterNote = ` rater ${options.rater}: ${toRate.length} questions in run ${result.runId} (${options.db}), spend ${spendText(result.spendUsd, result.unpricedCells)}${result.interrupted ? '; stopped early — re-run to resume' : ''}.`;
        if (result.interrupted) process.exitCode = 3;
      }
      const rows: CurationRow[] = base.map((row) => {
        const withRater = rated.has(row.id) ? { ...row, rater: rated.get(row.id) as RaterOutcome } : row;
        return { ...withRater, ...curationDecision(withRater) };
      });
      const count = (d: CurationRow['decision']) => rows.filter((r) => r.decision === d).length;
      for (const row of rows) process.stdout.write(`${row.decision}\t${row.id}\t${row.reason}\n`);
      process.stderr.write(
        `${rows.length} questions from ${set.source}: ${count('keep')} keep, ${count('drop')} drop, ${count('review')} review.${raterNote}\n`,
      );
      if (options.out) emit(rows.map((row) => JSON.stringify(row)).join('\n'), options.out);
      const passing = rows.filter((r) => r.decision !== 'drop');
      if (options.exportSheet) {
        writeFileSync(options.exportSheet, exportAnnotationSheet(passing.map((r) => ({ id: r.id, question: r.text }))));
        process.stderr.write(`wrote ${options.exportSheet} (${passing.length} items)\n`);
      }
      if (options.orthogonalitySheet) {
        const items = buildOrthogonalityItems(
          passing.map((r) => ({ id: r.id, text: r.text })),
          listStimuli(loadBuiltinPerturbations()),
        );
        writeFileSync(options.orthogonalitySheet, exportAnnotationSheet(items, 'orthogonality'));
        process.stderr.write(`wrote ${options.orthogonalitySheet} (${items.length} items)\n`);
      }
    });
}

/** `memory labeler-check`: labeler reliability by relabelling a run's steps. */
function registerMemoryLabelerCheck(memory: Command): void {
  memory
    .command('labeler-check')
    .description('labeler reliability (App. C.4): relabel a run’s steps with other labelers, a T = 1 repeat and the reworded ontology')
    .argument('<run.db>', 'run store written by `echolens memory run`')
    .option('--run <id>', 'memory run id (default: the latest memory run in the store)')
    .option('--labelers <models>', 'comma-separated labelers to compare with the run’s labeler (cross-model agreement)')
    .option('--repeat', 'relabel twice at temperature 1 with the run’s labeler (within-model agreement)')
    .option('--alt-ontology [file]', 'relabel with the alternative wording (default: the built-in reworded ontology)')
    .option('--limit <n>', 'relabel at most n responses (a seeded choice)', positiveInteger('--limit'))
    .option('--concurrency <n>', 'concurrent calls per provider', positiveInteger('--concurrency'))
    .option('--max-cost <usd>', 'stop before spending more than this', positiveNumber('--max-cost'))
    .option('--format <format>', 'md or json', 'md')
    .option('-o, --out <file>', 'write the tables to a file instead of stdout')
    .addHelpText('after', `${MODEL_REFS}\nRelabelling calls are cells of a check run in the same store: re-running the command resumes it.`)
    .action(async (db: string, options) => {
      const format = checkFormat(options.format);
      const labelers: string[] = options.labelers
        ? String(options.labelers)
            .split(',')
            .map((s) => s.trim())
            .filter((s) => s !== '')
        : [];
      if (labelers.length === 0 && !options.repeat && options.altOntology === undefined) {
        throw new InvalidArgumentError('--labelers', 'name other labelers, or pass --repeat or --alt-ontology (nothing to compare otherwise)');
      }
      const { config, check, passes, items } = await readStore(db, async (store) => {
        const runId = await memoryRunId(store, options.run);
        const setup = await memoryRunSetup(store, runId);
        const check: LabelerCheckConfig = {
          run: runId,
          labelers,
          repeat: Boolean(options.repeat),
          altOntology: options.altOntology === undefined ? null : options.altOntology === true ? 'builtin:alt' : String(options.altOntology),
          limit: options.limit ?? null,
          seed: setup.config.seed,
        };
        const passes = labelerCheckPasses(setup.config, { ontology: setup.ontology, source: setup.options.ontologySource }, check);
        return { config: setup.config, check, passes, items: await relabelItems(await collectMemorySamples(store, runId), store) };
      });
      if (items.every((item) => item.steps.length === 0)) throw new ConfigError('the run has no answered generation with steps to relabel', { field: 'run' });
      const result = await runLabelerCheck(db, config, check, passes, items, {
        ...(options.concurrency ? { concurrency: options.concurrency } : {}),
        ...(options.maxCost ? { maxCostUsd: options.maxCost } : {}),
      });
      process.stderr.write(
        `${result.resumed ? 'resumed' : 'started'} check run ${result.runId}: ${result.items} responses × ${result.passes} labelings, ${result.invalidLabelings} invalid after re-asks, ${result.unansweredLabelings} unanswered, spend ${spendText(result.spendUsd, result.unpricedCells)}\n`,
      );
      if (result.interrupted) return stoppedEarly('the check stopped early; run the same command again to resume', process.stderr);
      const collection = await readStore(db, (store) => collectLabelerCheck(store, result.runId));
      const reliability = labelerReliability(collection.records);
      emit(
        format === 'json'
          ? JSON.stringify(
              { checkRunId: collection.checkRunId, memoryRunId: collection.memoryRunId, check: collection.check, passes: collection.passes, ...reliability },
              null,
              2,
            )
          : renderLabelerCheckMarkdown(collection, reliability),
        options.out,
      );
    });
}

/** `echolens memory run | report | calibrate | curate | labeler-check | label-sheet` (the training commands: memory-mitigation.ts). */
export function registerMemory(memory: Command): void {
  registerAuditCommands(memory, memoryAudit, memoryCommandHooks());
}
