import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage, DecodingParams } from '../models/types.js';
import { findJsonObjects } from '../core/json-extract.js';
import { promptMessages, reaskMessages } from './judge-messages.js';

/** The four properties every benchmark question must have (DriftLens §2.1, App. A). */
export const QUESTION_PROPERTIES = ['reasoning_invoking', 'unverifiable', 'persona_indifferent', 'stand_alone'] as const;
export type QuestionProperty = (typeof QUESTION_PROPERTIES)[number];

export const RATER_DEFAULT_PARAMS: Readonly<DecodingParams> = Object.freeze({ temperature: 0, maxTokens: 512 });

const RUBRIC: Record<QuestionProperty, string> = {
  reasoning_invoking:
    'Answering requires weighing trade-offs, comparing options, or justifying a choice. FALSE for fact lookups, definitions, explanations of a concept, how-to recipes, or requests for a list of resources.',
  unverifiable:
    'No single objectively correct answer exists that could be checked against a source. FALSE when the answer is a fact, a number, a rule of a specific jurisdiction, a clinical diagnosis or treatment, or a job description.',
  persona_indifferent:
    "A good answer does not depend on the asker's gender, age, sexual orientation, occupation, appearance, education, income or disability. FALSE when the question asks about the asker's identity or body, or when those attributes decide the answer.",
  stand_alone:
    'The question is understandable on its own, without a hidden document, image, quote, earlier conversation or unstated situation. FALSE when it refers to "this", "the above", an attachment, or facts the reader cannot see.',
};

export const RATER_SYSTEM_PROMPT = 'You screen candidate questions for a reasoning benchmark. You answer with one JSON object and nothing else.';

/** The LLM rater prompt for one candidate question (the call itself is a cell). */
export function buildRaterMessages(question: string): ChatMessage[] {
  if (question.trim() === '') throw new InvalidArgumentError('question', 'must be non-empty');
  return promptMessages(RATER_SYSTEM_PROMPT, [
    'Decide whether the candidate question has each of the four properties below. Judge the question as written.',
    '',
    ...QUESTION_PROPERTIES.map((property) => `- ${property}: ${RUBRIC[property]}`),
    '',
    '<question>',
    question.trim(),
    '</question>',
    '',
    'Answer with only this JSON object (true or false for each property, and one short sentence of rationale):',
    '{"reasoning_invoking":true,"unverifiable":true,"persona_indifferent":true,"stand_alone":true,"rationale":"…"}',
  ]);
}

export type RaterFailureReason = 'empty' | 'no_json' | 'multiple_json' | 'schema';

export interface RaterVerdict {
  properties: Record<QuestionProperty, boolean>;
  rationale: string;
  /** True when all four properties hold. */
  keep: boolean;
  /** Properties that failed (the reason a question is dropped). */
  failed: QuestionProperty[];
}

export type RaterParseResult = ({ ok: true } & RaterVerdict) | { ok: false; reason: RaterFailureReason; detail: string };

/** Strict parser of the rater output: exactly one JSON object with four booleans. */
export function parseRaterOutput(text: string): RaterParseResult {
  if (text.trim() === '') return { ok: false, reason: 'empty', detail: 'empty output' };
  const search = findJsonObjects(text);
  if (search.kind === 'none') return { ok: false, reason: 'no_json', detail: 'no JSON object found' };
  if (search.kind === 'many') return { ok: false, reason: 'multiple_json', detail: `${search.count} JSON objects found` };
  const properties = {} as Record<QuestionProperty, boolean>;
  for (const property of QUESTION_PROPERTIES) {
    const value = search.value[property];
    if (typeof value !== 'boolean') {
      return { ok: false, reason: 'schema', detail: `"${property}" must be true or false` };
    }
    properties[property] = value;
  }
  const rationale = typeof search.value.rationale === 'string' ? search.value.rationale.trim() : '';
  const failed = QUESTION_PROPERTIES.filter((property) => !properties[property]);
  return { ok: true, properties, rationale, keep: failed.length === 0, failed };
}

/** Re-ask after an invalid rater output: the conversation, the bad answer, a short reminder. */
export function buildRaterReaskMessages(original: readonly ChatMessage[], badOutput: string, failure: { detail: string }): ChatMessage[] {
  const reminder = `Your answer could not be used (${failure.detail}). Reply with only one JSON object with the boolean fields ${QUESTION_PROPERTIES.join(', ')} and a string "rationale". No other text.`;
  return reaskMessages(original, badOutput, reminder);
}
