import { basename } from 'node:path';
import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import { compactionPositions, decilePositions, explicitPositions, type Position, uniformPositions } from '../sessions/positions.js';
import { sessionGoal } from '../sessions/goal.js';
import { buildPrefix, renderContinuation } from '../sessions/prefix.js';
import { referenceContext } from '../sessions/reference.js';
import type { CounterName, Session } from '../sessions/types.js';
import type { PersonaConfig, PositionSelector } from './config.js';
import type { ContextArm, ContinuationInfo, PlannedPosition, SessionPlanInput } from './plan.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * Adapts a read Session to what the pure plan needs: positions from the
 * configured selectors, each context arm's messages, real continuations for
 * distances (docs/decisions.md#d20) and the opening goal for goal re-injection.
 */

function selectPositions(session: Session, selector: PositionSelector, counter: CounterName): Position[] {
  if ('uniform' in selector) return uniformPositions(session, { count: selector.uniform, counter }).positions;
  if ('deciles' in selector) return decilePositions(session, {}).positions;
  if ('steps' in selector) return explicitPositions(session, selector.steps, { counter, beyond: 'drop' }).positions;
  if ('compactions' in selector) {
    return compactionPositions(session, { postOffset: selector.compactions.postOffset, preOffset: selector.compactions.preOffset, counter }).positions;
  }
  const total = session.counters[counter];
  const values = selector.fraction.map((f) => Math.max(1, Math.round(f * total)));
  return explicitPositions(session, values, { counter, beyond: 'clip' }).positions.map((p, i) => ({
    ...p,
    label: `F${String(Math.round((selector.fraction[i] ?? 0) * 100)).padStart(3, '0')}`,
  }));
}

/** Every configured position of a session, by label; a selector the session cannot satisfy is an error naming the file. */
/**
 * The session's positions, deduplicated by the probed context itself (the timeline prefix they
 * end at): two selectors, or two uniform picks, that land on the same context probe it once, and
 * every label that chose it stays listed. A compaction label wins as the name (it carries the
 * side). Errors name the session file.
 */
function resolvePositions(session: Session, config: PersonaConfig): Map<number, { position: Position; selectedBy: string[] }> {
  const byEnd = new Map<number, { position: Position; selectedBy: string[] }>();
  for (const selector of config.positions) {
    let positions: Position[];
    try {
      positions = selectPositions(session, selector, config.counter);
    } catch (error) {
      if (error instanceof InvalidArgumentError) throw new InvalidArgumentError('positions', `${session.file}: ${error.message}`);
      throw error;
    }
    for (const position of positions) {
      const seen = byEnd.get(position.end);
      if (!seen) byEnd.set(position.end, { position, selectedBy: [position.label] });
      else {
        if (!seen.selectedBy.includes(position.label)) seen.selectedBy.push(position.label);
        if (!compactionOf(seen.position.label) && compactionOf(position.label)) seen.position = position;
      }
    }
  }
  if (byEnd.size === 0) throw new InvalidArgumentError('positions', `no position of ${session.file} could be resolved`);
  return byEnd;
}

/** What a run manifest records about a session's contexts: the goal chosen for re-injection and the positions whose context lacks a compaction summary. */
export interface SessionContextFacts {
  goal: { text: string; messageIndex: number; source: string; skipped: Array<{ messageIndex: number; reason: string }> } | null;
  /** One per position whose context follows a Codex remote compaction (its summary is encrypted: absent from the context). */
  missingSummaries: Array<{ position: string; compaction: number; note: string }>;
}

export function sessionContextFacts(session: Session, config: PersonaConfig): SessionContextFacts {
  const goal = sessionGoal(session);
  const missingSummaries: SessionContextFacts['missingSummaries'] = [];
  for (const position of [...resolvePositions(session, config).values()].map((v) => v.position).sort((a, b) => a.end - b.end)) {
    let last: (typeof session.compactions)[number] | undefined;
    for (const c of session.compactions) if (c.atMessage < position.end) last = c;
    if (last === undefined || last.summaryAvailable) continue;
    missingSummaries.push({
      position: position.label,
      compaction: last.ordinal + 1,
      note: `context after compaction C${last.ordinal + 1} (${last.compaction}): its summary is encrypted and absent from the context`,
    });
  }
  return {
    goal: goal === undefined ? null : { text: goal.text.slice(0, 200), messageIndex: goal.messageIndex, source: goal.source, skipped: goal.skipped },
    missingSummaries,
  };
}

function compactionOf(label: string): PlannedPosition['compaction'] {
  const match = /^C(\d+)-(pre|post)$/u.exec(label);
  return match ? { index: Number(match[1]), side: match[2] as 'pre' | 'post' } : undefined;
}

/**
 * The session's opening goal, ≤ 1,000 chars: its first human prompt that states a task (slash
 * commands, their expansions and harness prompts skipped; see sessions/goal.ts).
 */
export function openingGoal(session: Session): string | undefined {
  return sessionGoal(session)?.text;
}

/** Timeline end after `n` more assistant messages than at `end` (clipped to the session). */
function endAfterAssistantMessages(session: Session, end: number, n: number): number {
  const start = end > 0 ? (session.messages[end - 1]?.counters.assistantMessages ?? 0) : 0;
  for (let i = end; i < session.messages.length; i++) {
    if ((session.messages[i]?.counters.assistantMessages ?? 0) - start >= n) return i + 1;
  }
  return session.messages.length;
}

export function sessionPlanInput(
  session: Session,
  config: PersonaConfig,
  others: readonly Session[],
  id = session.id ?? basename(session.file),
  texts: { acknowledgement?: string; fillerFlatTemplate?: string } = {},
): SessionPlanInput {
  const byEnd = resolvePositions(session, config);
  const byLabel = new Map<string, Position>();
  for (const { position } of byEnd.values()) byLabel.set(position.label, position);
  const resolved = [...byEnd.values()].sort((a, b) => a.position.end - b.position.end || a.position.label.localeCompare(b.position.label));
  const positions: PlannedPosition[] = resolved.map(({ position: p, selectedBy }) => ({
    label: p.label,
    value: p.reached,
    ...(selectedBy.length > 1 ? { selectedBy } : {}),
    ...(compactionOf(p.label) ? { compaction: compactionOf(p.label) } : {}),
  }));
  const renderOptions = {
    mode: config.render,
    maxChars: config.windowChars,
    toolPayloadChars: config.toolTruncate,
    ...(texts.acknowledgement !== undefined ? { acknowledgement: texts.acknowledgement } : {}),
  };
  const realCache = new Map<string, ReturnType<typeof buildPrefix>>();
  const realAt = (planned: PlannedPosition) => {
    return getOrInsert(realCache, planned.label, () => buildPrefix(session, byLabel.get(planned.label) as Position, renderOptions));
  };
  const other = others.find((s) => s !== session && s.messages.length > 0);
  /**
   * The real messages that followed the position, as the model saw them: the replay stops at the
   * next compaction (after it the session's context is the summary, not this prefix plus the
   * replay) or at the session end, and says so.
   */
  const continuations = new Map<string, ContinuationInfo & { messages: ChatMessage[] }>();
  const continuationAt = (planned: PlannedPosition, messages: number): ContinuationInfo & { messages: ChatMessage[] } => {
    const cacheKey = `${planned.label}\u0000${messages}`;
    const cached = continuations.get(cacheKey);
    if (cached) return cached;
    const position = byLabel.get(planned.label) as Position;
    let to = endAfterAssistantMessages(session, position.end, messages);
    let clipped: ContinuationInfo['clipped'] = null;
    const boundary = session.compactions.find((c) => c.atMessage > position.end && c.atMessage < to);
    if (boundary) {
      to = boundary.atMessage;
      clipped = `compaction C${boundary.ordinal + 1}`;
    }
    const startCount = position.end > 0 ? (session.messages[position.end - 1]?.counters.assistantMessages ?? 0) : 0;
    const reached = to > 0 ? (session.messages[to - 1]?.counters.assistantMessages ?? 0) - startCount : 0;
    if (!clipped && reached < messages) clipped = 'session end';
    const rendered = to > position.end ? renderContinuation(session, position.end, to, renderOptions).messages : [];
    // The insertion ends with an assistant turn, so the replay starts at the next user turn.
    const replay = rendered[0]?.role === 'assistant' ? rendered.slice(1) : rendered;
    const result = { messages: replay, timelineMessages: to - position.end, assistantMessages: reached, requested: messages, clipped };
    continuations.set(cacheKey, result);
    return result;
  };
  return {
    id,
    positions,
    context(planned: PlannedPosition, arm: ContextArm): ChatMessage[] {
      const real = realAt(planned);
      if (arm === 'real') return real.messages;
      if (arm === 'unrelated-session' && !other) {
        throw new InvalidArgumentError('arms', 'the unrelated-session arm needs at least two sessions in the config');
      }
      return referenceContext(arm, real, {
        seed: config.seed,
        ...(other ? { other } : {}),
        ...(texts.fillerFlatTemplate !== undefined ? { flatTemplate: texts.fillerFlatTemplate } : {}),
      }).messages;
    },
    continuation(planned: PlannedPosition, messages: number): ChatMessage[] {
      return continuationAt(planned, messages).messages;
    },
    continuationInfo(planned: PlannedPosition, messages: number): ContinuationInfo {
      const { timelineMessages, assistantMessages, requested, clipped } = continuationAt(planned, messages);
      return { timelineMessages, assistantMessages, requested, clipped };
    },
    ...(openingGoal(session) ? { goal: openingGoal(session) } : {}),
  };
}
