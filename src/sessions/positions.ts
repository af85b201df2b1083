import { InvalidArgumentError } from '../core/errors.js';
import { COUNTER_NAMES, type CounterName, type Session } from './types.js';

/**
 * Snapshot positions (pure). A position is a value on a named counter; it
 * resolves to `end`, the number of timeline messages the context includes: the
 * first message at which the counter reaches the value (a value inside a merged
 * API message resolves to the whole message). `pre` positions of a compaction
 * resolve directly to the boundary (docs/decisions.md#d14).
 *
 * Positions beyond the session: `beyond: 'error'` (default) throws naming the value
 * and the session total; `'clip'` moves them to the session end and marks them
 * `clipped`; `'drop'` leaves them out. Both of the latter add a warning.
 */

export interface Position {
  label: string;
  counter: CounterName;
  /** The value asked for. */
  value: number;
  /** Timeline messages in the context (`contextAt(session, end)`). */
  end: number;
  /** Counter value once message end-1 happened (0 for an empty context). */
  reached: number;
  /** Compactions before the position. */
  segment: number;
  clipped?: boolean;
}

export type BeyondPolicy = 'error' | 'clip' | 'drop';

export interface PositionSet {
  positions: Position[];
  warnings: string[];
}

/** Onset sweep of the reference (A3.4), on agent steps. */
export const ONSET_STEPS: readonly number[] = [1, 5, 25, 100, 250, 500, 1000, 1500];
export const DEFAULT_POST_OFFSET = 100;

export function assertCounter(counter: string): CounterName {
  if (!(COUNTER_NAMES as readonly string[]).includes(counter)) {
    throw new InvalidArgumentError('counter', `must be one of ${COUNTER_NAMES.join(', ')}, got "${counter}"`);
  }
  return counter as CounterName;
}

function requireMessages(session: Session): void {
  if (session.content !== 'full') throw new InvalidArgumentError('session', 'positions need a session read with content "full"');
}

export function counterTotal(session: Session, counter: CounterName): number {
  return session.messages.at(-1)?.counters[counter] ?? 0;
}

/** Position for an explicit `end` (used for `pre` positions). */
export function positionAtEnd(session: Session, end: number, counter: CounterName, label: string): Position {
  requireMessages(session);
  if (!Number.isInteger(end) || end < 0 || end > session.messages.length) {
    throw new InvalidArgumentError('end', `must be an integer in [0, ${session.messages.length}], got ${end}`);
  }
  const reached = end === 0 ? 0 : session.messages[end - 1]!.counters[counter];
  const segment = session.compactions.filter((c) => c.atMessage < end).length;
  return { label, counter, value: reached, end, reached, segment };
}

/** Resolves one value; `undefined` only with `beyond: 'drop'`. */
export function resolvePosition(
  session: Session,
  counter: CounterName,
  value: number,
  options: { label?: string; beyond?: BeyondPolicy; warnings?: string[] } = {},
): Position | undefined {
  requireMessages(session);
  assertCounter(counter);
  if (!Number.isInteger(value) || value < 1) throw new InvalidArgumentError('value', `positions are integers ≥ 1, got ${value}`);
  const label = options.label ?? `${counter}=${value}`;
  const total = counterTotal(session, counter);
  if (value > total) {
    const beyond = options.beyond ?? 'error';
    const message = `position ${label} (${counter} ${value}) is beyond the session (${counter} total ${total})`;
    if (beyond === 'error') throw new InvalidArgumentError('position', `${message}; use beyond "clip" or "drop"`);
    if (beyond === 'drop') {
      options.warnings?.push(`${message}: dropped`);
      return undefined;
    }
    options.warnings?.push(`${message}: clipped to the session end`);
    const clipped = positionAtEnd(session, session.messages.length, counter, label);
    return { ...clipped, value, clipped: true };
  }
  // Counters are non-decreasing along the timeline: binary search the first message reaching value.
  const messages = session.messages;
  let lo = 0;
  let hi = messages.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (messages[mid]!.counters[counter] >= value) hi = mid;
    else lo = mid + 1;
  }
  const end = lo + 1;
  const position = positionAtEnd(session, end, counter, label);
  return { ...position, value };
}

function collect(session: Session, counter: CounterName, requests: Array<{ value: number; label: string }>, beyond: BeyondPolicy): PositionSet {
  const warnings: string[] = [];
  const positions: Position[] = [];
  for (const r of requests) {
    const p = resolvePosition(session, counter, r.value, { label: r.label, beyond, warnings });
    if (p) positions.push(p);
  }
  return { positions, warnings };
}

/** `count` positions evenly spaced over [1, total], both ends included. */
export function uniformPositions(session: Session, options: { count: number; counter?: CounterName }): PositionSet {
  const counter = options.counter ?? 'agentSteps';
  const count = options.count;
  if (!Number.isInteger(count) || count < 1) throw new InvalidArgumentError('count', `must be a positive integer, got ${count}`);
  const total = counterTotal(session, counter);
  if (total < count) throw new InvalidArgumentError('count', `${count} positions need at least ${count} ${counter}; the session has ${total}`);
  const values = count === 1 ? [total] : Array.from({ length: count }, (_, i) => Math.round(1 + (i * (total - 1)) / (count - 1)));
  return collect(
    session,
    counter,
    values.map((value, i) => ({ value, label: `P${String(i).padStart(2, '0')}` })),
    'error',
  );
}

/** Deciles (or other quantiles) of assistant messages: position k/count of the way through, k = 1…count. */
export function decilePositions(session: Session, options: { count?: number; counter?: CounterName } = {}): PositionSet {
  const counter = options.counter ?? 'assistantMessages';
  const count = options.count ?? 10;
  if (!Number.isInteger(count) || count < 1) throw new InvalidArgumentError('count', `must be a positive integer, got ${count}`);
  const total = counterTotal(session, counter);
  if (total < count) throw new InvalidArgumentError('count', `${count} quantiles need at least ${count} ${counter}; the session has ${total}`);
  const requests = Array.from({ length: count }, (_, i) => ({
    value: Math.ceil(((i + 1) * total) / count),
    label: `Q${String(Math.round(((i + 1) * 100) / count)).padStart(3, '0')}`,
  }));
  return collect(session, counter, requests, 'error');
}

/** Explicit values, e.g. the onset sweep. */
export function explicitPositions(session: Session, values: readonly number[], options: { counter?: CounterName; beyond?: BeyondPolicy } = {}): PositionSet {
  const counter = options.counter ?? 'agentSteps';
  const requests = values.map((value) => ({ value, label: `T${String(value).padStart(4, '0')}` }));
  return collect(session, counter, requests, options.beyond ?? 'error');
}

/**
 * Pre/post each compaction (docs/decisions.md#d14). With the counter at value C at the boundary, `pre`
 * is the position at C + 1 − `preOffset`: the default 1 is the last position strictly before
 * the boundary (everything before it), 39 is C − 38 (the reference's P1_pre_C1). `post` is
 * `postOffset` counter units after the boundary (default +100 agent steps). A post beyond the
 * session follows `beyond` (default 'drop'); a pre before the first unit is left out with a warning.
 */
export function compactionPositions(
  session: Session,
  options: { postOffset?: number; preOffset?: number; counter?: CounterName; beyond?: BeyondPolicy } = {},
): PositionSet {
  requireMessages(session);
  const counter = options.counter ?? 'agentSteps';
  const offset = options.postOffset ?? DEFAULT_POST_OFFSET;
  if (!Number.isInteger(offset) || offset < 1) throw new InvalidArgumentError('postOffset', `must be a positive integer, got ${offset}`);
  const preOffset = options.preOffset ?? 1;
  if (!Number.isInteger(preOffset) || preOffset < 1) throw new InvalidArgumentError('preOffset', `must be a positive integer, got ${preOffset}`);
  const warnings: string[] = [];
  const positions: Position[] = [];
  for (const c of session.compactions) {
    const n = c.ordinal + 1;
    const preValue = c.counters[counter] + 1 - preOffset;
    if (c.atMessage === 0) warnings.push(`compaction C${n} is at the very start: no pre position`);
    else if (preOffset === 1) positions.push(positionAtEnd(session, c.atMessage, counter, `C${n}-pre`));
    else if (preValue < 1) warnings.push(`compaction C${n} is at ${counter} ${c.counters[counter]}: no pre position ${preOffset - 1} before it`);
    else positions.push(resolvePosition(session, counter, preValue, { label: `C${n}-pre` })!);
    const post = resolvePosition(session, counter, c.counters[counter] + offset, {
      label: `C${n}-post`,
      beyond: options.beyond ?? 'drop',
      warnings,
    });
    if (post) positions.push(post);
  }
  return { positions, warnings };
}

/**
 * Parses a CLI position `counter=value` (e.g. `agentSteps=1300`); a bare number means agent steps.
 */
export function parsePositionSpec(spec: string): { counter: CounterName; value: number } {
  const match = /^(?:([A-Za-z]+)=)?(\d+)$/.exec(spec.trim());
  if (!match) throw new InvalidArgumentError('--at', `expected <counter>=<n> (counters: ${COUNTER_NAMES.join(', ')}), got "${spec}"`);
  const counter = assertCounter(match[1] ?? 'agentSteps');
  return { counter, value: Number(match[2]) };
}
