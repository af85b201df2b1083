import { InputError, InvalidArgumentError } from '../core/errors.js';
import type { Session, SessionMessage } from '../sessions/types.js';

/**
 * Continuation cutpoints (pure). A cutpoint is a place in the session's timeline where
 * the context ends just before an assistant message that makes exactly one tool call:
 * that call is the recorded ground truth of "what the agent did next". The context is
 * timeline messages [0, end), `end` = the index of that assistant message.
 *
 * Selection over the usable candidates (documented in docs/continuation.md):
 * - `stratified` (default): the candidates are split into `count` consecutive strata of
 *   (almost) equal size, in timeline order, and the middle candidate of each is taken —
 *   spread over the whole session, every part represented once;
 * - `strided`: the reference's rule: skip `skipFirst` candidates, take every
 *   ⌊remaining / count⌋-th from the first remaining one.
 */

export type CutpointStrategy = 'stratified' | 'strided';
export const CUTPOINT_STRATEGIES: readonly CutpointStrategy[] = ['stratified', 'strided'];

export interface GroundTruthCall {
  name: string;
  /** The recorded input (an object for JSON tools; a string for free-form tools like Codex apply_patch). */
  input: unknown;
}

export interface Cutpoint {
  /** `C01`, `C02`, … in timeline order. */
  id: string;
  /** Timeline messages in the context: the ground-truth message is `messages[end]`. */
  end: number;
  /** Where the cutpoint lies in the session (end / messages), 0…1. */
  fraction: number;
  groundTruth: GroundTruthCall;
  /** Transcript line of the ground-truth call. */
  line: number;
}

export interface CutpointOptions {
  count: number;
  strategy?: CutpointStrategy;
  /** Candidates skipped at the start before selecting (default 0; the reference skipped 100). */
  skipFirst?: number;
}

/** Whether a timeline message is a usable ground truth: an assistant message with exactly one tool call, after some context. */
function groundTruthOf(message: SessionMessage): GroundTruthCall | undefined {
  if (message.role !== 'assistant' || message.index < 1) return undefined;
  const calls = message.blocks.filter((b) => b.type === 'tool_call');
  if (calls.length !== 1) return undefined;
  const call = calls[0]!;
  if (call.type !== 'tool_call' || call.name === '') return undefined;
  return { name: call.name, input: call.input ?? {} };
}

/** Every usable candidate, in timeline order. */
export function cutpointCandidates(session: Session): Cutpoint[] {
  if (session.content !== 'full') throw new InvalidArgumentError('session', 'cutpoints need a session read with content "full"');
  const out: Cutpoint[] = [];
  const total = Math.max(1, session.messages.length);
  for (const message of session.messages) {
    const truth = groundTruthOf(message);
    if (!truth) continue;
    // A context that has seen something: at least one earlier user message.
    if (!session.messages.slice(0, message.index).some((m) => m.role === 'user')) continue;
    out.push({ id: '', end: message.index, fraction: message.index / total, groundTruth: truth, line: message.raw[0]?.line ?? 0 });
  }
  return out;
}

/** Counts tool calls on the main chain (any number per message). */
function toolCallCount(session: Session): number {
  return Object.values(session.toolsUsed).reduce((n, c) => n + c, 0);
}

/**
 * Selects `count` cutpoints. Throws an InputError naming the transcript and the number
 * of usable cutpoints found when the session has no tool calls or too few candidates.
 */
export function selectCutpoints(session: Session, options: CutpointOptions): Cutpoint[] {
  const { count } = options;
  const strategy = options.strategy ?? 'stratified';
  const skip = options.skipFirst ?? 0;
  if (!Number.isInteger(count) || count < 1) throw new InvalidArgumentError('count', `must be a positive integer, got ${count}`);
  if (!CUTPOINT_STRATEGIES.includes(strategy)) {
    throw new InvalidArgumentError('strategy', `must be one of ${CUTPOINT_STRATEGIES.join(', ')}, got ${String(strategy)}`);
  }
  if (!Number.isInteger(skip) || skip < 0) throw new InvalidArgumentError('skipFirst', `must be a non-negative integer, got ${skip}`);
  if (toolCallCount(session) === 0) {
    throw new InputError('the transcript has no tool calls: a continuation audit needs recorded tool calls (0 usable cutpoints found)', {
      file: session.file,
    });
  }
  const all = cutpointCandidates(session);
  const candidates = all.slice(skip);
  if (candidates.length < count) {
    throw new InputError(
      `${count} cutpoints asked, but the transcript has only ${candidates.length} usable cutpoint${candidates.length === 1 ? '' : 's'}` +
        ` (assistant messages with exactly one tool call${skip > 0 ? `, after skipping the first ${skip} of ${all.length}` : ''})`,
      { file: session.file },
      { hint: `ask for at most ${candidates.length} (cutpoints.count) or use a longer session` },
    );
  }
  let chosen: Cutpoint[];
  if (strategy === 'strided') {
    const stride = Math.max(1, Math.floor(candidates.length / count));
    chosen = Array.from({ length: count }, (_, i) => candidates[i * stride]!);
  } else {
    chosen = Array.from({ length: count }, (_, i) => {
      const lo = Math.floor((i * candidates.length) / count);
      const hi = Math.floor(((i + 1) * candidates.length) / count);
      return candidates[Math.floor((lo + hi - 1) / 2)]!;
    });
  }
  return chosen.map((c, i) => ({ ...c, id: `C${String(i + 1).padStart(2, '0')}` }));
}
