import { hashCanonical } from '../core/canonical-json.js';
import { findJsonObjects } from '../core/json-extract.js';
import type { ParseResult } from '../experiment/reask.js';
import type { ChatMessage, ModelRequest, ToolCall } from '../models/types.js';
import type { CellSpec } from '../store/types.js';
import type { GroundTruthCall } from './cutpoints.js';
import { type CallScore, flatArguments } from './scoring.js';

/**
 * The optional semantic-equivalence judge of the continuation audit (docs/continuation.md,
 * "Judge"). Deterministic scoring stays the measure; the judge is asked only where it is
 * ambiguous: a free-text or command argument of a call to the right tool that scores below an
 * exact match. An argument the judge calls equivalent scores 1; one it calls different, or whose
 * verdict never parsed, keeps its deterministic score. Judge cells are ordinary cached cells: the
 * request holds only the tool, the argument and the two values, so the same question is asked
 * once per run whatever target or arm raised it, and a resume repeats no call.
 */

export const JUDGE_STAGE = 'judge';

/** How a judge question was answered (re-asks resolved). */
export type JudgeVerdict = 'equivalent' | 'different' | 'invalid' | 'unanswered';

export interface JudgeQuestion {
  tool: string;
  argument: string;
  recorded: string;
  emitted: string;
}

const asText = (value: unknown): string => (typeof value === 'string' ? value : JSON.stringify(value));

/** The questions an answer raises: its text and command arguments that scored below 1. */
export function judgeQuestions(truth: GroundTruthCall, score: CallScore, calls: readonly ToolCall[] | undefined): JudgeQuestion[] {
  if (score.status !== 'call' || score.nameMatch !== true) return [];
  const first = calls?.[0];
  if (first === undefined) return [];
  const recorded = flatArguments(truth.input);
  const emitted = flatArguments(first.input);
  const out: JudgeQuestion[] = [];
  for (const arg of score.arguments) {
    if ((arg.kind !== 'text' && arg.kind !== 'command') || arg.score >= 1) continue;
    if (!recorded.has(arg.path) || !emitted.has(arg.path)) continue;
    out.push({ tool: truth.name, argument: arg.path, recorded: asText(recorded.get(arg.path)), emitted: asText(emitted.get(arg.path)) });
  }
  return out;
}

/** The label that ties a judge cell to its question (the same question from any cell shares it). */
export function questionId(question: JudgeQuestion): string {
  return hashCanonical(question).slice(0, 16);
}

export const JUDGE_SYSTEM_PROMPT =
  'You compare one argument of two calls to the same tool: the call an agent really made, and a call proposed in its place. ' +
  'Say whether the proposed value would have the same effect in that call (the same search, the same command outcome, the same edit). ' +
  'Differences of wording, order or formatting that do not change the effect count as equivalent.';

const MARK_START = '<<<';
const MARK_END = '>>>';

export function judgeMessages(q: JudgeQuestion): ChatMessage[] {
  return [
    { role: 'system', content: JUDGE_SYSTEM_PROMPT },
    {
      role: 'user',
      content: [
        `Tool: ${q.tool}`,
        `Argument: ${q.argument}`,
        `Recorded value:\n${MARK_START}\n${q.recorded}\n${MARK_END}`,
        `Proposed value:\n${MARK_START}\n${q.emitted}\n${MARK_END}`,
        'Answer with one JSON object and nothing else: {"equivalent": true} or {"equivalent": false}.',
      ].join('\n\n'),
    },
  ];
}

/** Reads the two values back from a judge request (the simulated judge uses it). */
export function questionOfMessages(messages: readonly ChatMessage[]): { recorded: string; emitted: string } | null {
  const text = messages.find((m) => m.role === 'user')?.content;
  if (typeof text !== 'string') return null;
  const values = [...text.matchAll(/<<<\n([\s\S]*?)\n>>>/gu)].map((m) => m[1] ?? '');
  return values.length === 2 ? { recorded: values[0]!, emitted: values[1]! } : null;
}

/**
 * The judge cell of a question. `cutpoint` is set when the same question arose at several
 * cutpoints: the cell is then that cutpoint's own draw (`request.unit`) under the label
 * `<question id>@<cutpoint>`.
 */
export function judgeSpec(model: string, question: JudgeQuestion, cutpoint: string | null = null): CellSpec {
  const request: ModelRequest = { model, messages: judgeMessages(question), params: { temperature: 0, maxTokens: 64 }, sample: 0 };
  if (cutpoint !== null) request.unit = cutpoint;
  const id = cutpoint === null ? questionId(question) : `${questionId(question)}@${cutpoint}`;
  return { request, labels: { experiment: 'continuation', stage: JUDGE_STAGE, judge: model, question: id } };
}

/** A verdict: exactly one JSON object with a boolean `equivalent`. */
export function parseEquivalence(text: string): ParseResult<boolean> {
  const found = findJsonObjects(text);
  if (found.kind === 'none') return { ok: false, error: 'no JSON object in the answer' };
  if (found.kind === 'many') return { ok: false, error: `${found.count} JSON objects in the answer, expected one` };
  const value = found.value.equivalent;
  return typeof value === 'boolean' ? { ok: true, value } : { ok: false, error: '"equivalent" must be true or false' };
}

export function reaskEquivalence(previous: ChatMessage[], badOutput: string): ChatMessage[] {
  return [
    ...previous,
    { role: 'assistant', content: badOutput },
    { role: 'user', content: 'That answer could not be read. Reply with exactly one JSON object: {"equivalent": true} or {"equivalent": false}.' },
  ];
}

/**
 * An answer's score after the judge's verdicts (keyed by question id, or `<id>@<cutpoint>` for a
 * question asked per cutpoint); untouched without verdicts.
 */
export function applyVerdicts(
  truth: GroundTruthCall,
  score: CallScore,
  calls: readonly ToolCall[] | undefined,
  verdicts: ReadonlyMap<string, JudgeVerdict>,
  cutpoint?: string,
): CallScore {
  const questions = judgeQuestions(truth, score, calls);
  if (questions.length === 0 || verdicts.size === 0) return score;
  const verdictOf = (q: JudgeQuestion) =>
    (cutpoint === undefined ? undefined : verdicts.get(`${questionId(q)}@${cutpoint}`)) ?? verdicts.get(questionId(q)) ?? 'unanswered';
  const byPath = new Map(questions.map((q) => [q.argument, verdictOf(q)] as const));
  const args = score.arguments.map((a) => {
    const verdict = byPath.get(a.path);
    if (verdict === undefined) return a;
    return { ...a, judged: verdict, score: verdict === 'equivalent' ? 1 : a.score };
  });
  const fidelity = args.length === 0 ? score.fidelity : args.reduce((n, a) => n + a.score, 0) / args.length;
  return { ...score, arguments: args, fidelity };
}
