import type { SimProfile } from '../../models/sim-registry.js';
import type { ChatMessage, DecodingParams } from '../../models/types.js';
import { extractSteps } from '../steps.js';
import { promptMessages, reaskMessages } from '../judge-messages.js';

/** Rewrites are deterministic transformations: temperature 0 (docs/decisions.md#d1). */
export const DPO_REWRITE_PARAMS: Readonly<DecodingParams> = Object.freeze({ temperature: 0, maxTokens: 2048 });

export type RewriteRole = 'chosen' | 'rejected';

const FORMAT = '<think><step_1>…</step_1><step_2>…</step_2>…</think><answer>…</answer>';

const ROLE_BRIEF: Record<RewriteRole, string> = {
  chosen:
    'Rewrite it into a helpful, accurate answer to the question. Early in the reasoning, name the personal detail and state that it is irrelevant to the question, then reason about the question itself.',
  rejected:
    'Rewrite it into a lower-quality answer: vague or evasive, or visibly distracted by the personal detail (tailoring the reasoning to it although the question does not call for that). Keep it plausible and keep the same length range as a normal answer.',
};

export const REWRITE_MARKER_ROLE = 'Target quality:';

/** The rewrite prompt (App. I.1): same question, same structured format, chosen or rejected quality. */
export function buildRewriteMessages(question: string, persona: string, response: string, role: RewriteRole): ChatMessage[] {
  return promptMessages('You rewrite assistant responses into a fixed structured format. You output only the rewritten response.', [
    'Below are a user message (a personal detail followed by a question) and an assistant response to it.',
    '',
    '<user_detail>',
    persona,
    '</user_detail>',
    '<question>',
    question.trim(),
    '</question>',
    '<original_response>',
    response,
    '</original_response>',
    '',
    `${REWRITE_MARKER_ROLE} ${role}.`,
    ROLE_BRIEF[role],
    '',
    `Use exactly this format, with at least two numbered steps and nothing outside the tags: ${FORMAT}`,
  ]);
}

const STRUCTURE = /^<think>\s*((?:<step_\d+>[\s\S]*?<\/step_\d+>\s*)+)<\/think>\s*<answer>([\s\S]*?)<\/answer>$/;
const STEP = /<step_(\d+)>([\s\S]*?)<\/step_(\d+)>/g;

/**
 * Strict check of the rewrite format: `<think>` holding ≥ 2 steps numbered 1…N with matching
 * closing tags and non-empty contents, then a non-empty `<answer>`; nothing outside.
 */
export function parseRewriteOutput(text: string): { ok: true; value: string } | { ok: false; error: string } {
  const trimmed = text.trim();
  const match = STRUCTURE.exec(trimmed);
  if (match === null) return { ok: false, error: 'not in the <think><step_i>…</step_i></think><answer>…</answer> format' };
  const steps = [...match[1]!.matchAll(STEP)];
  if (steps.length < 2) return { ok: false, error: 'needs at least two steps' };
  for (let i = 0; i < steps.length; i++) {
    const [, open, content, close] = steps[i]!;
    if (Number(open) !== i + 1 || Number(close) !== i + 1) return { ok: false, error: `step ${i + 1} is numbered ${open}/${close}` };
    if (content!.trim() === '') return { ok: false, error: `step ${i + 1} is empty` };
    if (/<\/?(?:think|answer|step_\d+)>/.test(content!)) return { ok: false, error: `step ${i + 1} contains a tag` };
  }
  if (match[2]!.trim() === '') return { ok: false, error: 'empty <answer>' };
  return { ok: true, value: trimmed };
}

export function buildRewriteReaskMessages(previous: readonly ChatMessage[], badOutput: string, error: string): ChatMessage[] {
  return reaskMessages(previous, badOutput, `That output could not be used (${error}). Output only the rewritten response in exactly this format: ${FORMAT}`);
}

function between(text: string, open: string, close: string): string | null {
  const start = text.indexOf(open);
  const end = text.lastIndexOf(close);
  return start < 0 || end < start ? null : text.slice(start + open.length, end).trim();
}

/**
 * `sim:dpo-rewriter` — SIMULATION, measures nothing: re-renders the original response's
 * steps in the target format; a chosen rewrite gains a first step naming the detail as
 * irrelevant, a rejected one a first step that dwells on it.
 */
export function createRewriterSimProfile(name = 'dpo-rewriter'): SimProfile {
  return {
    name,
    description: 'Simulation (measures nothing): re-renders the original steps in the DPO rewrite format, adding a persona step.',
    answer(request) {
      const user = request.messages.find((m) => m.role === 'user' && m.content.includes(REWRITE_MARKER_ROLE));
      if (user === undefined) return { text: 'I can only rewrite a DPO rewrite prompt.' };
      const persona = between(user.content, '<user_detail>\n', '\n</user_detail>') ?? '';
      const original = between(user.content, '<original_response>\n', '\n</original_response>') ?? '';
      const role: RewriteRole = user.content.includes(`${REWRITE_MARKER_ROLE} chosen.`) ? 'chosen' : 'rejected';
      const extraction = extractSteps(original);
      const first =
        role === 'chosen'
          ? `The detail "${persona}" is irrelevant to this question, so I set it aside.`
          : `Since the user said "${persona}", the answer should mainly be about that.`;
      const steps = [first, ...extraction.steps.map((s) => s.replace(/\s+/g, ' ').trim()).filter((s) => s !== '')];
      if (steps.length < 2) steps.push('The question itself decides the answer.');
      const answer = (extraction.answer ?? '').trim() || 'It depends on the situation.';
      return { text: `<think>${steps.map((s, i) => `<step_${i + 1}>${s}</step_${i + 1}>`).join('')}</think><answer>${answer}</answer>` };
    },
  };
}
