import { basename } from 'node:path';
import { InvalidArgumentError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import {
  compactionPositions,
  decilePositions,
  explicitPositions,
  type Position,
  uniformPositions,
} from '../sessions/positions.js';
import { buildPrefix, renderContinuation } from '../sessions/prefix.js';
import { referenceContext } from '../sessions/reference.js';
import type { CounterName, Session } from '../sessions/types.js';
import type { PersonaConfig, PositionSelector } from './config.js';
import type { ContextArm, PlannedPosition, SessionPlanInput } from './plan.js';

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
    return compactionPositions(session, { postOffset: selector.compactions.postOffset, counter }).positions;
  }
  const total = session.counters[counter];
  const values = selector.fraction.map((f) => Math.max(1, Math.round(f * total)));
  return explicitPositions(session, values, { counter, beyond: 'clip' }).positions.map((p, i) => ({
    ...p,
    label: `F${String(Math.round((selector.fraction[i] ?? 0) * 100)).padStart(3, '0')}`,
  }));
}

function compactionOf(label: string): PlannedPosition['compaction'] {
  const match = /^C(\d+)-(pre|post)$/u.exec(label);
  return match ? { index: Number(match[1]), side: match[2] as 'pre' | 'post' } : undefined;
}

/** The session's opening goal: its first human prompt (harness-injected text excluded), ≤ 1,000 chars. */
export function openingGoal(session: Session): string | undefined {
  const first = session.messages.find((m) => m.kind === 'human');
  if (!first) return undefined;
  const text = first.blocks
    .map((b) => (b.type === 'text' ? b.text : ''))
    .join('\n')
    .trim();
  return text === '' ? undefined : text.slice(0, 1000);
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
): SessionPlanInput {
  const byLabel = new Map<string, Position>();
  for (const selector of config.positions) {
    for (const position of selectPositions(session, selector, config.counter)) {
      if (!byLabel.has(position.label)) byLabel.set(position.label, position);
    }
  }
  if (byLabel.size === 0) throw new InvalidArgumentError('positions', `no position of ${session.file} could be resolved`);
  const resolved = [...byLabel.values()].sort((a, b) => a.end - b.end || a.label.localeCompare(b.label));
  const positions: PlannedPosition[] = resolved.map((p) => ({
    label: p.label,
    value: p.reached,
    ...(compactionOf(p.label) ? { compaction: compactionOf(p.label) } : {}),
  }));
  const renderOptions = { mode: config.render, maxChars: config.windowChars, toolPayloadChars: config.toolTruncate };
  const realCache = new Map<string, ReturnType<typeof buildPrefix>>();
  const realAt = (planned: PlannedPosition) => {
    let prefix = realCache.get(planned.label);
    if (!prefix) {
      prefix = buildPrefix(session, byLabel.get(planned.label) as Position, renderOptions);
      realCache.set(planned.label, prefix);
    }
    return prefix;
  };
  const other = others.find((s) => s !== session && s.messages.length > 0);
  return {
    id,
    positions,
    context(planned: PlannedPosition, arm: ContextArm): ChatMessage[] {
      const real = realAt(planned);
      if (arm === 'real') return real.messages;
      if (arm === 'unrelated-session' && !other) {
        throw new InvalidArgumentError('arms', 'the unrelated-session arm needs at least two sessions in the config');
      }
      return referenceContext(arm, real, { seed: config.seed, ...(other ? { other } : {}) }).messages;
    },
    continuation(planned: PlannedPosition, messages: number): ChatMessage[] {
      const position = byLabel.get(planned.label) as Position;
      const to = endAfterAssistantMessages(session, position.end, messages);
      const rendered = renderContinuation(session, position.end, to, renderOptions).messages;
      // The insertion ends with an assistant turn, so the replay starts at the next user turn.
      return rendered[0]?.role === 'assistant' ? rendered.slice(1) : rendered;
    },
    ...(openingGoal(session) ? { goal: openingGoal(session) } : {}),
  };
}
