import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import { contextAt } from './context.js';
import type { Position } from './positions.js';
import { type RenderedPrefix, type RenderOptions, renderContext, resolveRenderOptions, toParts, toTurns } from './render.js';
import { codePointLength, tailCodePoints } from './text.js';
import type { Session } from './types.js';

export interface PrefixAt extends RenderedPrefix {
  /** Timeline messages the context is built from. */
  end: number;
  position?: Position;
}

/**
 * The model-visible context at a position, rendered and ready to send (pure given
 * the session). `at` is a resolved Position or a raw `end` (timeline messages).
 */
export function buildPrefix(session: Session, at: Position | number, options: RenderOptions = {}): PrefixAt {
  const end = typeof at === 'number' ? at : at.end;
  const rendered = renderContext(contextAt(session, end), options);
  return typeof at === 'number' ? { ...rendered, end } : { ...rendered, end, position: at };
}

/**
 * The real messages that followed a snapshot, rendered as alternating turns (docs/decisions.md#d20):
 * replayed after inserted anchor turns to reach the `far` distance. Messages [fromEnd, toEnd)
 * of the timeline, with the same tool-payload truncation; no window unless maxChars is given.
 * If the continuation starts with an assistant turn it is kept (it follows the anchor's
 * acknowledgement); if it ends with a user turn, the acknowledgement turn closes it.
 */
export function renderContinuation(
  session: Session,
  fromEnd: number,
  toEnd: number,
  options: RenderOptions = {},
): { messages: ChatMessage[]; includedMessages: number[]; chars: number } {
  if (!Number.isInteger(fromEnd) || !Number.isInteger(toEnd) || fromEnd < 0 || toEnd < fromEnd || toEnd > session.messages.length) {
    throw new InvalidArgumentError('range', `need 0 ≤ fromEnd ≤ toEnd ≤ ${session.messages.length}, got [${fromEnd}, ${toEnd})`);
  }
  const o = resolveRenderOptions({ ...options, mode: options.mode === 'untruncated' ? 'untruncated' : 'turns' });
  const context = contextAt(session, toEnd);
  const slice = { ...context, messages: context.messages.filter((m) => m.index >= fromEnd) };
  const parts = toParts(slice, { ...options, mode: o.mode });
  const messages: ChatMessage[] = toTurns(parts).map((turn) => ({ role: turn.role, content: turn.texts.join('\n\n') }));
  let chars = messages.reduce((n, m) => n + codePointLength(m.content), 0);
  if (Number.isFinite(o.maxChars) && chars > o.maxChars) {
    // Keep the tail, as every window here does.
    let remaining = o.maxChars;
    const kept: ChatMessage[] = [];
    for (let i = messages.length - 1; i >= 0 && remaining > 0; i -= 1) {
      const m = messages[i]!;
      const length = codePointLength(m.content);
      kept.unshift(length <= remaining ? m : { role: m.role, content: tailCodePoints(m.content, remaining) });
      remaining -= Math.min(length, remaining);
    }
    messages.splice(0, messages.length, ...kept);
    chars = o.maxChars;
  }
  if (messages.at(-1)?.role === 'user') messages.push({ role: 'assistant', content: o.acknowledgement });
  return { messages, includedMessages: parts.map((part) => part.messageIndex), chars };
}
