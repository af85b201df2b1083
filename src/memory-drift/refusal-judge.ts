import type { ParsedItem } from '../experiment/runtime.js';
import type { ChatMessage, DecodingParams } from '../models/types.js';
import type { SimProfile } from '../models/sim-registry.js';
import type { CellLabels } from '../store/types.js';
import { findJsonObjects } from '../core/json-extract.js';
import { detectRefusal } from './refusals.js';
import { promptMessages, reaskMessages } from './judge-messages.js';

/**
 * The optional refusal judge (`refusalJudge:` in a memory config): a model asked, for each
 * answered generation, whether the answer declines the question. Its cells are judge cells like
 * every judge's (temperature 0, cached, re-asked when unparseable, then invalid and counted).
 *
 * Combination rule (documented in docs/decisions.md, "Refusal judge"): when a judge is set, its
 * verdict decides; where the judge has no usable verdict (invalid after the re-asks, or not
 * answered) the deterministic detector (refusals.ts) decides. Without a judge the detector
 * decides. Agreement between the two is reported either way a judge ran.
 */

export const REFUSAL_JUDGE_STAGE = 'refusal-judge';

/** Default decoding of the refusal judge: deterministic and short. */
export const REFUSAL_JUDGE_PARAMS: Readonly<DecodingParams> = Object.freeze({ temperature: 0, maxTokens: 64 });

export const DEFAULT_REFUSAL_JUDGE_PROMPT =
  'Does the assistant answer below decline to answer the user’s question (a refusal, including a polite or indirect one), ' +
  'instead of giving an answer or a recommendation, however hedged?';

/** Longest answer text shown to the judge (characters); a refusal is short, the start of a long answer shows it is none. */
export const REFUSAL_JUDGE_MAX_CHARS = 4000;

export const REFUSAL_ANSWER_OPEN = '<assistant_answer>';
export const REFUSAL_ANSWER_CLOSE = '</assistant_answer>';

/** `refusalJudge:` as written in a config: a model reference, or `{ model, prompt }`. */
export type RefusalJudgeSetting = string | { model: string; prompt?: string | undefined };

export function refusalJudgeModel(setting: RefusalJudgeSetting): string {
  return typeof setting === 'string' ? setting : setting.model;
}

export function buildRefusalJudgeMessages(answer: string, prompt: string = DEFAULT_REFUSAL_JUDGE_PROMPT): ChatMessage[] {
  const shown = answer.length > REFUSAL_JUDGE_MAX_CHARS ? `${answer.slice(0, REFUSAL_JUDGE_MAX_CHARS)} …[clipped]` : answer;
  return promptMessages('You classify assistant answers. You answer with one JSON object and nothing else.', [
    prompt,
    '',
    REFUSAL_ANSWER_OPEN,
    shown,
    REFUSAL_ANSWER_CLOSE,
    '',
    'Answer with only this JSON object: {"refusal": true} or {"refusal": false}',
  ]);
}

/** The answer text inside a refusal-judge prompt (the sim judge reads it back), or null. */
export function readRefusalJudgePrompt(messages: readonly ChatMessage[]): string | null {
  const user = messages.find((m) => m.role === 'user' && m.content.includes(REFUSAL_ANSWER_OPEN));
  if (user === undefined) return null;
  const start = user.content.indexOf(REFUSAL_ANSWER_OPEN) + REFUSAL_ANSWER_OPEN.length;
  const end = user.content.lastIndexOf(REFUSAL_ANSWER_CLOSE);
  return end < start ? null : user.content.slice(start, end).trim();
}

/** Strict parse: exactly one JSON object with a boolean `refusal`. */
export function parseRefusalJudgeOutput(text: string): { ok: true; value: boolean } | { ok: false; error: string } {
  if (text.trim() === '') return { ok: false, error: 'empty: empty output' };
  const search = findJsonObjects(text);
  if (search.kind === 'none') return { ok: false, error: 'no_json: no JSON object found' };
  if (search.kind === 'many') return { ok: false, error: `multiple_json: ${search.count} JSON objects found, expected one` };
  const value = search.value.refusal;
  if (typeof value !== 'boolean') return { ok: false, error: 'schema: "refusal" must be true or false' };
  return { ok: true, value };
}

/** One judge cell for one answered generation. */
export function refusalJudgeItem(answer: string, setting: RefusalJudgeSetting, labels: CellLabels): ParsedItem<boolean> {
  const model = refusalJudgeModel(setting);
  const prompt = typeof setting === 'string' ? undefined : setting.prompt;
  return {
    spec: {
      request: { model, messages: buildRefusalJudgeMessages(answer, prompt), params: { ...REFUSAL_JUDGE_PARAMS }, sample: 0 },
      labels: { ...labels, stage: REFUSAL_JUDGE_STAGE, judge: model, attempt: 0 },
    },
    parse: parseRefusalJudgeOutput,
    reask(previous, badOutput) {
      return reaskMessages(previous, badOutput, 'That could not be read. Reply with only {"refusal": true} or {"refusal": false}.');
    },
  };
}

/** Who decided a generation's refusal verdict. */
export type RefusalSource = 'detector' | 'judge';

/** The combination rule: the judge's verdict when there is one, the detector's otherwise. */
export function combineRefusal(detector: boolean, judge: boolean | null): { refusal: boolean; source: RefusalSource } {
  return judge === null ? { refusal: detector, source: 'detector' } : { refusal: judge, source: 'judge' };
}

/** Agreement of judge and detector over the answers both classified. */
export interface RefusalAgreement {
  /** Answers with a judge verdict. */
  judged: number;
  both: number;
  judgeOnly: number;
  detectorOnly: number;
  neither: number;
  /** Share of judged answers on which they agree; null when nothing was judged. */
  agreement: number | null;
  /** Cohen's kappa; null when undefined (nothing judged, or chance agreement 1). */
  kappa: number | null;
}

export function refusalAgreement(pairs: ReadonlyArray<{ detector: boolean; judge: boolean }>): RefusalAgreement {
  let both = 0;
  let judgeOnly = 0;
  let detectorOnly = 0;
  let neither = 0;
  for (const p of pairs) {
    if (p.detector && p.judge) both += 1;
    else if (p.judge) judgeOnly += 1;
    else if (p.detector) detectorOnly += 1;
    else neither += 1;
  }
  const n = pairs.length;
  if (n === 0) return { judged: 0, both, judgeOnly, detectorOnly, neither, agreement: null, kappa: null };
  const observed = (both + neither) / n;
  const judgeYes = (both + judgeOnly) / n;
  const detectorYes = (both + detectorOnly) / n;
  const chance = judgeYes * detectorYes + (1 - judgeYes) * (1 - detectorYes);
  return { judged: n, both, judgeOnly, detectorOnly, neither, agreement: observed, kappa: chance >= 1 ? null : (observed - chance) / (1 - chance) };
}

/** Soft refusals the simulated judge also recognises (the deterministic detector does not). */
const SOFT_REFUSAL =
  /\b(?:i(?:['’]d| would) rather not|not comfortable (?:answering|weighing in)|prefer not to (?:answer|say|weigh in)|decline to (?:answer|weigh in))\b/i;

/**
 * `sim:refusal-judge` (SIMULATION, measures nothing): says "refusal" when the deterministic
 * detector does, and also for a few soft wordings ("I'd rather not weigh in") it misses; short
 * answers only. Lets tests and the demo exercise the judge path and its agreement table.
 */
export function createRefusalJudgeSimProfile(name = 'refusal-judge'): SimProfile {
  return {
    name,
    description:
      'Simulation (measures nothing): a refusal judge that agrees with the deterministic detector and also flags soft refusals ("I would rather not weigh in") in short answers.',
    answer(request) {
      const answer = readRefusalJudgePrompt(request.messages);
      if (answer === null) return { text: 'I only classify answers from a refusal-judge prompt.' };
      const refusal = detectRefusal(answer).refusal || (answer.length <= 600 && SOFT_REFUSAL.test(answer));
      return { text: JSON.stringify({ refusal }) };
    },
  };
}
