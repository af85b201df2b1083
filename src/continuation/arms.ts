import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import { contextAt } from '../sessions/context.js';
import { buildPrefix } from '../sessions/prefix.js';
import { fillerContext, unrelatedSessionContext } from '../sessions/reference.js';
import { headCodePoints, tailCodePoints } from '../sessions/text.js';
import type { Session } from '../sessions/types.js';
import type { Cutpoint } from './cutpoints.js';

/**
 * The four prefix arms of a cutpoint, at a matched length (pure):
 * - `scratch`: no prior context;
 * - `filler`: the persona audit's structure-matched filler of the recent window;
 * - `recent`: the session's own context before the cutpoint, the last `windowChars`;
 * - `cross`: a real window of the same length from another session (or, without one, from
 *   the same session half a session away — a different task, flagged in the notes).
 * Every arm then gets the same final user message: the immediate context (last user text,
 * last assistant text, last tool result) and the request for exactly one tool call.
 */

export const CONTINUATION_ARMS = ['scratch', 'filler', 'recent', 'cross'] as const;
export type ContinuationArm = (typeof CONTINUATION_ARMS)[number];

/** About four characters a token: the default window of ~3,000 tokens is 12,000 characters. */
export const CHARS_PER_TOKEN = 4;
export const DEFAULT_WINDOW_TOKENS = 3000;

export const CONTINUATION_SYSTEM_PROMPT =
  'You are an AI coding agent picking up a session that is already under way. ' +
  'Decide the single next action and take it by calling exactly one of the provided tools with complete arguments. ' +
  'Do not explain, do not ask questions, do not answer in prose.';

export const IMMEDIATE_LIMITS = { user: 1000, assistant: 1000, toolResult: 1500 } as const;

export interface ArmPrefix {
  arm: ContinuationArm;
  /** Prefix messages (context block + acknowledgement), empty for scratch. */
  messages: ChatMessage[];
  chars: number;
  /** Timeline indices of the source session in the window (recent/cross). */
  includedMessages: number[];
  notes: string[];
}

export interface CutpointArms {
  cutpoint: Cutpoint;
  immediate: string;
  arms: Record<ContinuationArm, ArmPrefix>;
}

export interface ArmOptions {
  windowChars: number;
  toolPayloadChars?: number;
  seed?: number;
  /** The assistant turn after a prefix (default: the session renderer's). */
  acknowledgement?: string;
}

/** The immediate context the reference gave every arm, in our own words and headings. */
export function immediateContext(session: Session, end: number): string {
  const context = contextAt(session, end);
  let user: string | undefined;
  let assistant: string | undefined;
  let toolResult: string | undefined;
  for (let i = context.messages.length - 1; i >= 0; i -= 1) {
    const m = context.messages[i]!;
    for (let j = m.blocks.length - 1; j >= 0; j -= 1) {
      const b = m.blocks[j]!;
      if (b.type === 'tool_result' && toolResult === undefined && b.content.trim() !== '') toolResult = b.content;
      if (b.type === 'text' && b.text.trim() !== '') {
        if (m.role === 'assistant' && assistant === undefined) assistant = b.text;
        if (m.role === 'user' && m.kind === 'human' && user === undefined) user = b.text;
      }
    }
    if (user !== undefined && assistant !== undefined && toolResult !== undefined) break;
  }
  const parts: string[] = [];
  if (user !== undefined) parts.push(`[Latest request from the user]\n${headCodePoints(user, IMMEDIATE_LIMITS.user)}`);
  if (assistant !== undefined) parts.push(`[Your latest message]\n${tailCodePoints(assistant, IMMEDIATE_LIMITS.assistant)}`);
  if (toolResult !== undefined) parts.push(`[Latest tool result]\n${tailCodePoints(toolResult, IMMEDIATE_LIMITS.toolResult)}`);
  parts.push('Continue the work: make the next tool call now (exactly one).');
  return parts.join('\n\n');
}

function crossEnd(session: Session, other: Session | undefined, cut: Cutpoint): { source: Session; end: number; note: string } {
  if (other) {
    const end = Math.max(1, Math.min(other.messages.length, Math.round(cut.fraction * other.messages.length) || other.messages.length));
    return { source: other, end, note: `cross window from ${other.file}` };
  }
  const n = session.messages.length;
  const end = Math.max(1, (cut.end + Math.floor(n / 2)) % n);
  return { source: session, end, note: 'no cross session given: cross window from the same session, half a session away' };
}

export function buildArms(session: Session, cut: Cutpoint, other: Session | undefined, options: ArmOptions): CutpointArms {
  if (!Number.isInteger(options.windowChars) || options.windowChars < 1) {
    throw new InvalidArgumentError('windowChars', `must be a positive integer, got ${options.windowChars}`);
  }
  const render = {
    mode: 'flat' as const,
    maxChars: options.windowChars,
    toolPayloadChars: options.toolPayloadChars ?? 200,
    ...(options.acknowledgement === undefined ? {} : { acknowledgement: options.acknowledgement }),
  };
  const recent = buildPrefix(session, cut.end, render);
  const filler = fillerContext(recent, options.seed === undefined ? {} : { seed: options.seed });
  const { source, end, note } = crossEnd(session, other, cut);
  const cross = unrelatedSessionContext(recent, source, { end });
  const crossIncluded = buildPrefix(source, end, { ...render, maxChars: Math.max(1, recent.chars) }).includedMessages;
  const notes = [...cross.notes.filter((n) => !n.startsWith('from ')), note];
  if (cross.chars !== recent.chars) notes.push(`cross window ${cross.chars} characters, recent ${recent.chars}`);
  return {
    cutpoint: cut,
    immediate: immediateContext(session, cut.end),
    arms: {
      scratch: { arm: 'scratch', messages: [], chars: 0, includedMessages: [], notes: [] },
      filler: { arm: 'filler', messages: filler.messages, chars: filler.chars, includedMessages: [], notes: filler.notes },
      recent: { arm: 'recent', messages: recent.messages, chars: recent.chars, includedMessages: recent.includedMessages, notes: recent.notes },
      cross: {
        arm: 'cross',
        messages: cross.messages,
        chars: cross.chars,
        includedMessages: other ? [] : crossIncluded,
        notes,
      },
    },
  };
}

/** The request messages of one arm: system prompt, prefix, immediate context. */
export function armMessages(arms: CutpointArms, arm: ContinuationArm, systemPrompt = CONTINUATION_SYSTEM_PROMPT): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (systemPrompt !== '') messages.push({ role: 'system', content: systemPrompt });
  // The prefix messages by reference: every cell of a cutpoint shares one copy (hashed and stored once).
  messages.push(...arms.arms[arm].messages);
  messages.push({ role: 'user', content: arms.immediate });
  return messages;
}

export function windowCharsOf(tokens: number): number {
  if (!Number.isInteger(tokens) || tokens < 1) throw new InvalidArgumentError('windowTokens', `must be a positive integer, got ${tokens}`);
  return tokens * CHARS_PER_TOKEN;
}
