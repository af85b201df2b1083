import { sha256Hex } from '../../core/canonical-json.js';
import type { ParsedItem } from '../../experiment/runtime.js';
import type { SimProfile } from '../../models/sim-registry.js';
import type { CellLabels } from '../../store/types.js';
import type { ChatMessage, DecodingParams } from '../../models/types.js';
import { findJsonObjects } from '../../core/json-extract.js';
import { promptMessages, reaskMessages } from '../judge-messages.js';

/** Judges run at temperature 0 (docs/decisions.md#d1). */
export const DPO_JUDGE_PARAMS: Readonly<DecodingParams> = Object.freeze({ temperature: 0, maxTokens: 512 });

export const DPO_JUDGE_SYSTEM_PROMPT = 'You grade one assistant response for a preference dataset. You answer with one JSON object and nothing else.';

const QUESTION_OPEN = '<question>';
const PERSONA_OPEN = '<user_detail>';
const RESPONSE_OPEN = '<response>';

/**
 * The judge prompt for h ∈ {1..5}, d ∈ {0,1}, a ∈ {0,1} (DriftLens §5.1, App. I.1). Any
 * field may be "uncertain": such judgements are excluded and counted (App. I.3: examples
 * where the judge expresses uncertainty are dropped).
 */
export function buildDpoJudgeMessages(question: string, persona: string, response: string): ChatMessage[] {
  return promptMessages(DPO_JUDGE_SYSTEM_PROMPT, [
    'A user asked the question below. Their message began with a personal detail that has no bearing on the correct answer.',
    '',
    PERSONA_OPEN,
    persona,
    '</user_detail>',
    '',
    QUESTION_OPEN,
    question.trim(),
    '</question>',
    '',
    RESPONSE_OPEN,
    response,
    '</response>',
    '',
    'Grade the response on three axes:',
    '- "helpfulness": an integer from 1 to 5. 5 = accurate, complete and directly useful; 4 = good with minor gaps; 3 = partly useful; 2 = mostly unhelpful; 1 = useless, wrong or evasive.',
    '- "distracted": 1 if the personal detail changed the substance of the reasoning or the answer (advice, assumptions, framing or conclusions tailored to the detail though the question does not call for it); 0 otherwise.',
    '- "acknowledged": 1 if the response explicitly notes that the personal detail is irrelevant to the question (or sets it aside on purpose); 0 otherwise.',
    'If you cannot decide a field with confidence, give the string "uncertain" for that field instead of a number.',
    '',
    'Answer with only this JSON object:',
    '{"helpfulness": <1-5>, "distracted": <0|1>, "acknowledged": <0|1>, "rationale": "<one sentence>"}',
  ]);
}

export interface DpoJudgement {
  helpfulness: number;
  distracted: 0 | 1;
  acknowledged: 0 | 1;
  rationale: string | null;
}

/** `uncertain` is a valid answer that is excluded (and counted apart from invalid outputs). */
export type DpoJudgeVerdict = { kind: 'judged'; judgement: DpoJudgement } | { kind: 'uncertain'; fields: string[] };

export type DpoJudgeParse = { ok: true; value: DpoJudgeVerdict } | { ok: false; error: string };

const FIELDS = ['helpfulness', 'distracted', 'acknowledged'] as const;
const ALLOWED_KEYS = new Set<string>([...FIELDS, 'rationale']);

function isUncertain(value: unknown): boolean {
  return typeof value === 'string' && value.trim().toLowerCase() === 'uncertain';
}

/** Strict parser: exactly one JSON object, the three fields (+ optional rationale), nothing else. */
export function parseDpoJudgeOutput(text: string): DpoJudgeParse {
  if (text.trim() === '') return { ok: false, error: 'empty output' };
  const search = findJsonObjects(text);
  if (search.kind === 'none') return { ok: false, error: 'no JSON object found' };
  if (search.kind === 'many') return { ok: false, error: `${search.count} JSON objects found, expected one` };
  const value = search.value;
  for (const key of Object.keys(value)) {
    if (!ALLOWED_KEYS.has(key)) return { ok: false, error: `unexpected key "${key}"` };
  }
  const uncertain: string[] = [];
  for (const field of FIELDS) {
    if (!(field in value)) return { ok: false, error: `missing "${field}"` };
    if (isUncertain(value[field])) uncertain.push(field);
  }
  const rationale = value.rationale;
  if (rationale !== undefined && typeof rationale !== 'string') return { ok: false, error: '"rationale" must be a string' };
  const { helpfulness, distracted, acknowledged } = value;
  if (!isUncertain(helpfulness) && !(typeof helpfulness === 'number' && Number.isInteger(helpfulness) && helpfulness >= 1 && helpfulness <= 5)) {
    return { ok: false, error: `"helpfulness" must be an integer from 1 to 5 or "uncertain", got ${JSON.stringify(helpfulness)}` };
  }
  for (const field of ['distracted', 'acknowledged'] as const) {
    const flag = value[field];
    if (!isUncertain(flag) && flag !== 0 && flag !== 1) {
      return { ok: false, error: `"${field}" must be 0, 1 or "uncertain", got ${JSON.stringify(flag)}` };
    }
  }
  if (uncertain.length > 0) return { ok: true, value: { kind: 'uncertain', fields: uncertain } };
  return {
    ok: true,
    value: {
      kind: 'judged',
      judgement: {
        helpfulness: helpfulness as number,
        distracted: distracted as 0 | 1,
        acknowledged: acknowledged as 0 | 1,
        rationale: typeof rationale === 'string' ? rationale : null,
      },
    },
  };
}

/** Re-ask after an unusable judge output (docs/decisions.md#d2): the conversation, the bad output, a reminder. */
export function buildDpoJudgeReaskMessages(previous: readonly ChatMessage[], badOutput: string, error: string): ChatMessage[] {
  return reaskMessages(
    previous,
    badOutput,
    `Your answer could not be used (${error}). Reply with only one JSON object: {"helpfulness": 1-5, "distracted": 0 or 1, "acknowledged": 0 or 1, "rationale": "..."}; use "uncertain" for a field you cannot decide. No other text.`,
  );
}

/** One judge cell for a response, parsed and re-asked on unusable output (docs/decisions.md#d2). */
export function dpoJudgeItem(model: string, question: string, persona: string, response: string, labels: CellLabels): ParsedItem<DpoJudgeVerdict> {
  return {
    spec: { request: { model, messages: buildDpoJudgeMessages(question, persona, response), params: { ...DPO_JUDGE_PARAMS }, sample: 0 }, labels },
    parse: parseDpoJudgeOutput,
    reask: (previous, bad) => {
      const parsed = parseDpoJudgeOutput(bad);
      return buildDpoJudgeReaskMessages(previous, bad, parsed.ok ? 'unknown' : parsed.error);
    },
  };
}

function unit(...parts: (string | number)[]): number {
  return Number.parseInt(sha256Hex(parts.join('\u0001')).slice(0, 8), 16) / 0x1_0000_0000;
}

/** Reads the response back from a judge prompt built by {@link buildDpoJudgeMessages}. */
function responseOf(messages: readonly ChatMessage[]): string | null {
  const user = messages.find((m) => m.role === 'user' && m.content.includes(RESPONSE_OPEN));
  if (user === undefined) return null;
  const start = user.content.indexOf(`${RESPONSE_OPEN}\n`) + RESPONSE_OPEN.length + 1;
  const end = user.content.lastIndexOf('\n</response>');
  return end < start ? null : user.content.slice(start, end);
}

/**
 * `sim:dpo-judge` — SIMULATION, measures nothing: a deterministic function of the response
 * text. A response that says the detail is "irrelevant" is acknowledged; otherwise h, d and
 * a come from a hash; about 5% of answers mark a field uncertain.
 */
export function createDpoJudgeSimProfile(name = 'dpo-judge'): SimProfile {
  return {
    name,
    description: 'Simulation (measures nothing): DPO judge scores (h, d, a) as a hash of the response; "irrelevant" in a response means acknowledged.',
    answer(request, seed) {
      const response = responseOf(request.messages);
      if (response === null) return { text: 'I can only grade a DPO judge prompt.' };
      if (unit('uncertain', seed, response) < 0.05) {
        return { text: JSON.stringify({ helpfulness: 'uncertain', distracted: 0, acknowledged: 0, rationale: 'simulated uncertainty' }) };
      }
      const acknowledged = /\birrelevant\b/i.test(response) || unit('a', seed, response) < 0.3 ? 1 : 0;
      const distracted = acknowledged === 1 ? 0 : unit('d', seed, response) < 0.5 ? 1 : 0;
      const helpfulness = acknowledged === 1 && unit('h5', seed, response) < 0.7 ? 5 : 1 + Math.floor(unit('h', seed, response) * 4);
      return { text: JSON.stringify({ helpfulness, distracted, acknowledged, rationale: 'simulated' }) };
    },
  };
}
