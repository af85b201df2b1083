import { InputError } from '../../core/errors.js';
import { type ParsedItem, runParsedStage, type StageRuntime } from '../../experiment/runtime.js';
import { lexicalDiversity } from '../../metrics/lexical-diversity.js';
import type { RunStore } from '../../store/run-store.js';
import { buildDpoJudgeMessages, buildDpoJudgeReaskMessages, DPO_JUDGE_PARAMS, type DpoJudgeVerdict, parseDpoJudgeOutput } from './dpo-judge.js';
import type { CachedLabeler } from './reward-labeler.js';
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
  store?: RunStore;
  runId?: string;
  reasks?: number;
  runtime?: StageRuntime;
}

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
    if (options.store === undefined || options.runId === undefined) throw new InputError('a judge needs a run store and run id');
    const judge = options.judge;
    const items: ParsedItem<DpoJudgeVerdict>[] = rows.map((row) => ({
      spec: {
        request: {
          model: judge,
          messages: buildDpoJudgeMessages(row.question, row.persona || '(none)', row.response),
          params: { ...DPO_JUDGE_PARAMS },
          sample: 0,
        },
        labels: { experiment: 'memory-evaluate', stage: 'helpfulness', model, question_id: row.question_id, line: row.line, attempt: 0 },
      },
      parse: parseDpoJudgeOutput,
      reask: (previous, bad) => {
        const parsed = parseDpoJudgeOutput(bad);
        return buildDpoJudgeReaskMessages(previous, bad, parsed.ok ? 'unknown' : parsed.error);
      },
    }));
    const { outcomes } = await runParsedStage(options.store, options.runId, items, options.reasks ?? 2, { progress: false, ...options.runtime });
    for (const outcome of outcomes) {
      if (outcome.status === 'ok') {
        if (outcome.value.kind === 'judged') {
          helpfulness.push(outcome.value.judgement.helpfulness);
          distracted.push(outcome.value.judgement.distracted);
        } else helpfulnessExcluded.uncertain++;
      } else if (outcome.status === 'invalid') helpfulnessExcluded.invalid++;
      else helpfulnessExcluded.unanswered++;
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

/** Table 2 layout (DTW ↓, diversity %, helpfulness) for a base model and its post-trained versions. */
export function renderEvaluationMarkdown(summaries: readonly HeldOutSummary[]): string {
  const num = (v: number | null, digits: number) => (v === null ? 'n/a' : v.toFixed(digits));
  return [
    '| model | DTW ↓ | diversity | helpfulness | non-distraction | n (DTW / judged / all) |',
    '|---|---|---|---|---|---|',
    ...summaries.map(
      (s) =>
        `| ${s.model} | ${num(s.meanDtw, 3)} | ${(100 * s.meanDiversity).toFixed(2)}% | ${num(s.meanHelpfulness, 2)} | ${s.nonDistraction === null ? 'n/a' : `${(100 * s.nonDistraction).toFixed(1)}%`} | ${s.dtwCount} / ${s.helpfulnessCount} / ${s.responses} |`,
    ),
    '',
  ].join('\n');
}
