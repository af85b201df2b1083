import { InputError } from '../../core/errors.js';
import type { StagedAuditRunner } from '../../experiment/audit.js';
import { runAudit } from '../../experiment/run-audit.js';
import type { ParsedItem, ParsedOutcome, StageRuntime } from '../../experiment/runtime.js';
import { lexicalDiversity } from '../../metrics/lexical-diversity.js';
import { num, table, text } from '../../report/document/cells.js';
import { sectionsMarkdown } from '../../report/document/render-markdown.js';
import type { DocumentSection } from '../../report/document/types.js';
import type { Ontology } from '../ontology.js';
import { type DpoJudgeVerdict, dpoJudgeItem } from './dpo-judge.js';
import type { CachedLabeler } from './reward-labeler.js';
import { stageLabeler } from './references.js';
import { type ReferenceMap, scoreLabelledResponse } from './reward.js';

/** One held-out response of one model. */
export interface HeldOutRow {
  question_id: string;
  question: string;
  /** The perturbation the prompt carried (judge context); empty when none. */
  persona: string;
  response: string;
  line: number;
}

/** Reads a held-out JSONL: `question_id`, `question`, `response`, optional `persona`. */
export function parseHeldOut(text: string, file = '<held-out>'): HeldOutRow[] {
  const rows: HeldOutRow[] = [];
  text.split('\n').forEach((raw, i) => {
    if (raw.trim() === '') return;
    const line = i + 1;
    let row: Record<string, unknown>;
    try {
      row = JSON.parse(raw) as Record<string, unknown>;
    } catch (error) {
      throw new InputError(`not JSON (${(error as Error).message})`, { file, line });
    }
    for (const field of ['question_id', 'question', 'response'] as const) {
      if (typeof row[field] !== 'string') throw new InputError('must be a string', { file, line, field });
    }
    if (row.persona !== undefined && typeof row.persona !== 'string') throw new InputError('must be a string', { file, line, field: 'persona' });
    rows.push({
      question_id: row.question_id as string,
      question: row.question as string,
      persona: (row.persona as string | undefined) ?? '',
      response: row.response as string,
      line,
    });
  });
  if (rows.length === 0) throw new InputError('no rows', { file });
  return rows;
}

/** Table 2's drift and quality columns for one model. */
export interface HeldOutSummary {
  model: string;
  responses: number;
  /** Mean normalised DTW against o*(x) (lower = less drift) over labelled responses with a reference. */
  meanDtw: number | null;
  dtwCount: number;
  /** Why responses have no DTW: no reference, labeler failure. */
  dtwExcluded: { noReference: number; labelerFailed: number };
  /** Mean lexical diversity (App. I.3) over all responses, in [0, 1]. */
  meanDiversity: number;
  /** Mean judge helpfulness (1–5) over confident judgements; null without a judge. */
  meanHelpfulness: number | null;
  helpfulnessCount: number;
  helpfulnessExcluded: { uncertain: number; invalid: number; unanswered: number };
  /**
   * Non-distraction rate (Table 6): share of confidently judged responses the judge found not
   * distracted by the perturbation (distracted = 0); null without a judge or without judgements.
   */
  nonDistraction: number | null;
}

export interface EvaluateOptions {
  references: ReferenceMap;
  labeler: CachedLabeler;
  /** Judge model for helpfulness (the DPO judge prompt; uncertain judgements excluded). */
  judge?: string;
  /** Runs the judge's cells (with re-asks) as a stage of the evaluation's run; required with `judge`. */
  judgeStage?: JudgeStage;
  reasks?: number;
}

/** A stage runner for helpfulness-judge cells (`runAudit`'s `parsedStage`). */
export type JudgeStage = (items: readonly ParsedItem<DpoJudgeVerdict>[], retries: number) => Promise<{ outcomes: ParsedOutcome<DpoJudgeVerdict>[] }>;

const mean = (values: readonly number[]) => (values.length === 0 ? null : values.reduce((a, v) => a + v, 0) / values.length);

/** Scores one model's held-out responses: DTW vs references, lexical diversity, helpfulness (cells). */
export async function evaluateHeldOut(model: string, rows: readonly HeldOutRow[], options: EvaluateOptions): Promise<HeldOutSummary> {
  const labels = await options.labeler.labelAll(rows.map((r) => r.response));
  const dtws: number[] = [];
  const dtwExcluded = { noReference: 0, labelerFailed: 0 };
  rows.forEach((row, i) => {
    const reference = options.references.get(row.question_id);
    const outcome = labels[i]!;
    if (reference === undefined) dtwExcluded.noReference++;
    else if (!outcome.ok) dtwExcluded.labelerFailed++;
    else dtws.push(scoreLabelledResponse(row.response, reference, outcome.symbols).dtw);
  });
  const diversity = rows.map((r) => lexicalDiversity(r.response));
  const helpfulness: number[] = [];
  const distracted: number[] = [];
  const helpfulnessExcluded = { uncertain: 0, invalid: 0, unanswered: 0 };
  if (options.judge !== undefined) {
    if (options.judgeStage === undefined) throw new InputError('a judge needs a stage to run its cells in (judgeStage)');
    const judge = options.judge;
    const items = rows.map((row) => {
      const labels = { experiment: 'memory-evaluate', stage: 'helpfulness', model, question_id: row.question_id, line: row.line, attempt: 0 };
      return dpoJudgeItem(judge, row.question, row.persona || '(none)', row.response, labels);
    });
    const { outcomes } = await options.judgeStage(items, options.reasks ?? 2);
    for (const outcome of outcomes) {
      if (outcome.status === 'ok' && outcome.value.kind === 'judged') {
        helpfulness.push(outcome.value.judgement.helpfulness);
        distracted.push(outcome.value.judgement.distracted);
      } else helpfulnessExcluded[outcome.status === 'ok' ? 'uncertain' : outcome.status]++;
    }
  }
  return {
    model,
    responses: rows.length,
    meanDtw: mean(dtws),
    dtwCount: dtws.length,
    dtwExcluded,
    meanDiversity: mean(diversity) ?? 0,
    meanHelpfulness: options.judge === undefined ? null : mean(helpfulness),
    helpfulnessCount: helpfulness.length,
    helpfulnessExcluded,
    nonDistraction: options.judge === undefined || distracted.length === 0 ? null : 1 - (mean(distracted) as number),
  };
}

/** What `memory evaluate` records as its run's config (the design: same config, same run). */
export interface EvaluationConfig {
  labeler: string;
  judge: string | null;
  ontology: Ontology;
}

export interface EvaluationInput {
  references: ReferenceMap;
  /** Held-out responses per model, base first. */
  models: readonly { name: string; rows: readonly HeldOutRow[] }[];
}

const labelStage = (model: string) => `labels ${model}`;
const judgeStageName = (model: string) => `helpfulness ${model}`;

/**
 * `memory evaluate` as an audit runner: per model a labeler stage (cells shared across models
 * through one cached labeler) and, with a judge, a helpfulness stage. `runAudit` records the
 * stages, keeps one budget and handles Ctrl-C; a second run with the same inputs calls nothing.
 */
export const evaluationRunner: StagedAuditRunner<EvaluationConfig, EvaluationInput, HeldOutSummary[]> = {
  name: 'memory-evaluate',
  limits: () => ({}),
  prepare: () => Promise.reject(new Error('memory evaluate is given its held-out responses (runAudit input)')),
  plan: () => [],
  manifestOptions: () => ({}),
  stages: (config, input) =>
    input.models.flatMap((model) => [
      { name: labelStage(model.name), expected: null },
      ...(config.judge === null ? [] : [{ name: judgeStageName(model.name), expected: model.rows.length }]),
    ]),
  async execute(context) {
    const { config, input } = context;
    let stage = '';
    const labeler = stageLabeler(context, () => stage);
    const summaries: HeldOutSummary[] = [];
    for (const model of input.models) {
      if (context.stopped) break;
      stage = labelStage(model.name);
      const before = labeler.stagesRun;
      const judge = config.judge;
      const summary = await evaluateHeldOut(model.name, model.rows, {
        references: input.references,
        labeler,
        ...(judge === null ? {} : { judge, judgeStage: (items, retries) => context.parsedStage(items, retries, judgeStageName(model.name)) }),
      });
      // Every answer was labelled already (or had no steps): the stage is complete with no cells.
      if (labeler.stagesRun === before) await context.parsedStage([], 0, stage);
      summaries.push(summary);
    }
    return summaries;
  },
};

/** Runs `evaluationRunner` in the store `db`; `interrupted` means re-run the same command to finish. */
export async function runEvaluation(config: EvaluationConfig, input: EvaluationInput, db: string, runtime: StageRuntime = {}) {
  return runAudit(evaluationRunner, config, db, { runtime, input, specs: [], seed: 42 });
}

/** Table 2 layout (DTW ↓, diversity %, helpfulness) for a base model and its post-trained versions, as a document section. */
export function evaluationSections(summaries: readonly HeldOutSummary[]): DocumentSection[] {
  const rows = summaries.map((s) => [
    text(s.model),
    num(s.meanDtw, 'fixed', 3),
    num(s.meanDiversity, 'share', 2),
    num(s.meanHelpfulness, 'fixed', 2),
    num(s.nonDistraction, 'share', 1),
    text(`${s.dtwCount} / ${s.helpfulnessCount} / ${s.responses}`),
  ]);
  return [{ title: '', blocks: [table(['model', 'DTW ↓', 'diversity', 'helpfulness', 'non-distraction', 'n (DTW / judged / all)'], rows, [1, 2, 3, 4])] }];
}

/** The Table 2 layout in Markdown (the shared renderer). */
export function renderEvaluationMarkdown(summaries: readonly HeldOutSummary[]): string {
  return sectionsMarkdown(evaluationSections(summaries));
}
