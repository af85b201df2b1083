import { InvalidArgumentError } from '../core/errors.js';
import type { Block, CompactionEvent, Session, SessionMessage } from './types.js';

/** What a tool result cleared by a microcompaction is replaced with (Claude Code's own placeholder wording). */
export const CLEARED_TOOL_RESULT = '[Old tool result content cleared]';

export interface SessionContext {
  /** Timeline messages included (`end` = how many; the context is what the model had after message end-1). */
  end: number;
  /** The model-visible messages, in order. Cleared tool results already replaced. */
  messages: SessionMessage[];
  /** The last compaction before the position, if any. */
  compaction?: CompactionEvent;
  notes: string[];
}

/**
 * The model-visible context after the first `end` timeline messages (pure).
 * Replays the context events that happened before that point: the last compaction
 * replaces everything before it (Claude Code: its summary message; Codex local:
 * kept prompts + summary; Codex remote/replacement: the replacement history),
 * rollbacks remove turns, microcompactions clear tool results.
 * An event at exactly `end` has not happened yet (`pre` positions sit just before it).
 */
export function contextAt(session: Session, end: number): SessionContext {
  if (session.content !== 'full') {
    throw new InvalidArgumentError('session', 'was read with content "none"; read it with content "full" to build contexts');
  }
  if (!Number.isInteger(end) || end < 0 || end > session.messages.length) {
    throw new InvalidArgumentError('end', `must be an integer in [0, ${session.messages.length}], got ${end}`);
  }
  const notes: string[] = [];
  const happened = session.events.filter((e) => e.atMessage < end);
  let compaction: CompactionEvent | undefined;
  for (const e of happened) if (e.kind === 'compaction') compaction = e;
  const start = compaction?.atMessage ?? 0;
  const base: SessionMessage[] = [];
  if (compaction?.replacement) {
    base.push(...compaction.replacement);
    if (!compaction.summaryAvailable) {
      notes.push(
        `compaction ${compaction.ordinal + 1} is a Codex remote compaction: its summary is encrypted and not recoverable; the context is the replacement history without it`,
      );
    }
  } else if (compaction?.keptMessages) {
    for (const index of compaction.keptMessages) {
      const m = session.messages[index];
      if (m) base.push(m);
    }
  }
  const removed: Array<[number, number]> = [];
  for (const e of happened) if (e.kind === 'rollback' && e.atMessage > start) removed.push([Math.max(e.removedFrom, start), e.atMessage]);
  const timeline: SessionMessage[] = [];
  for (let i = start; i < end; i += 1) {
    if (removed.some(([from, to]) => i >= from && i < to)) continue;
    timeline.push(session.messages[i]!);
  }
  const messages = [...base, ...timeline];
  const clearings = happened.filter((e) => e.kind === 'microcompaction');
  if (clearings.length === 0) {
    const out: SessionContext = { end, messages, notes };
    if (compaction) out.compaction = compaction;
    return out;
  }
  let cleared = 0;
  const result = messages.map((m) => {
    const ids = new Set<string>();
    for (const e of clearings) if (m.index < e.atMessage && m.index >= 0) for (const id of e.clearedToolIds) ids.add(id);
    if (ids.size === 0 || !m.blocks.some((b) => b.type === 'tool_result' && b.toolCallId !== undefined && ids.has(b.toolCallId))) return m;
    const blocks: Block[] = m.blocks.map((b) => {
      if (b.type !== 'tool_result' || b.toolCallId === undefined || !ids.has(b.toolCallId)) return b;
      cleared += 1;
      return { ...b, content: CLEARED_TOOL_RESULT };
    });
    return { ...m, blocks };
  });
  if (cleared > 0) notes.push(`${cleared} tool result(s) cleared by microcompaction`);
  const out: SessionContext = { end, messages: result, notes };
  if (compaction) out.compaction = compaction;
  return out;
}
