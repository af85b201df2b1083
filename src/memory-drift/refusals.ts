import { extractAnswer } from './steps.js';

/**
 * Deterministic refusal detector for generation answers. A refusal ("I'm sorry, but I can't
 * help with that.") is not a reasoning trajectory: scored as one, it becomes a one-step
 * sequence with a misleading drift. Refusals are therefore excluded from the drift statistics,
 * counted per target × condition, and their rate compared with the no-memory floor.
 *
 * The rule is conservative: the answer (the `<answer>` block if any, else the whole text,
 * outside `<think>`) must be short and open with a refusal phrase, or consist of one.
 */

export interface RefusalVerdict {
  refusal: boolean;
  /** The phrase that matched, for the report; null when not a refusal. */
  evidence: string | null;
}

/** Longest text (characters) still read as a refusal: a longer answer is an answer, even if it hedges. */
export const MAX_REFUSAL_CHARS = 600;

const PHRASES: readonly RegExp[] = [
  /^(?:i['’]m|i am|i['’]m really|i am really)\s+sorry[,.!]?\s*(?:but\s+)?(?:i\s+)?(?:can(?:not|['’]t)|am\s+(?:not\s+able|unable)|won['’]t|must\s+decline|(?:do\s+not|don['’]t)\s+(?:feel|think))/i,
  /^(?:sorry|apologies|my apologies)[,.!]?\s*(?:but\s+)?(?:i\s+)?(?:can(?:not|['’]t)|am\s+(?:not\s+able|unable)|won['’]t)/i,
  /^(?:unfortunately,?\s+)?i\s+(?:can(?:not|['’]t)|am\s+(?:not\s+able|unable)|won['’]t|must\s+decline|have\s+to\s+decline)\s+(?:to\s+)?(?:help|assist|provide|answer|comply|do\s+that|respond|engage|give|offer|support|fulfil|fulfill)/i,
  /^as\s+an\s+ai(?:\s+(?:language\s+model|assistant))?,?\s+i\s+(?:can(?:not|['’]t)|am\s+(?:not\s+able|unable)|don['’]t|do\s+not)/i,
  /^i['’]m\s+(?:not\s+able|unable)\s+to\s+(?:help|assist|provide|answer|comply|respond)/i,
];

function answerText(text: string): string {
  const answer = extractAnswer(text);
  const body = answer !== null && answer !== '' ? answer : text.replace(/<think\s*>[\s\S]*?(?:<\/think\s*>|$)/gi, '');
  return body
    .replace(/<\/?[a-z_0-9]+\s*>/gi, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/** Whether a generation answer is a refusal (deterministic, English phrasing). */
export function detectRefusal(text: string | null): RefusalVerdict {
  if (text === null) return { refusal: false, evidence: null };
  const body = answerText(text);
  if (body === '' || body.length > MAX_REFUSAL_CHARS) return { refusal: false, evidence: null };
  for (const phrase of PHRASES) {
    const match = phrase.exec(body);
    if (match !== null) return { refusal: true, evidence: match[0] };
  }
  return { refusal: false, evidence: null };
}
