import { InvalidArgumentError } from '../core/errors.js';

/**
 * Labeling long answers in chunks (pure). One labeler call takes at most `maxSteps` steps and
 * at most `maxChars` characters of step text; a longer answer is labeled in consecutive chunks
 * with overlap-free step ranges, each its own cached labeler cell (with its own re-asks), and
 * the symbol sequences are joined in order. One chunk that stays unparseable makes the whole
 * labeling invalid ("chunk k/n: …"): a trajectory with a hole is not a trajectory.
 */

export interface ChunkBudget {
  /** Steps per labeler call. */
  maxSteps: number;
  /** Characters of step text per labeler call; a single longer step is clipped to this in the prompt. */
  maxChars: number;
}

/** Defaults: the default step cap (64) fits one call, so default runs label each answer in one cell as before. */
export const DEFAULT_CHUNK_BUDGET: Readonly<ChunkBudget> = Object.freeze({ maxSteps: 64, maxChars: 48_000 });

/** A chunk of an answer's steps: 0-based, `to` exclusive; `index` 1-based of `count`. */
export interface StepChunk {
  index: number;
  count: number;
  from: number;
  to: number;
}

/** The chunk budget a config asks for (`steps.chunkSteps`, `steps.chunkChars`), defaults otherwise. */
export function chunkBudgetOf(steps: { chunkSteps?: number | undefined; chunkChars?: number | undefined }): ChunkBudget {
  return { maxSteps: steps.chunkSteps ?? DEFAULT_CHUNK_BUDGET.maxSteps, maxChars: steps.chunkChars ?? DEFAULT_CHUNK_BUDGET.maxChars };
}

/** A step as the labeler sees it: clipped to the character budget (the stored steps stay whole). */
export function clipStep(step: string, maxChars: number): string {
  return step.length <= maxChars ? step : `${step.slice(0, maxChars)} …[clipped]`;
}

/** Consecutive, overlap-free chunks covering every step: greedy within the budget, at least one step each. */
export function labelingChunks(steps: readonly string[], budget: ChunkBudget): StepChunk[] {
  if (!Number.isInteger(budget.maxSteps) || budget.maxSteps < 1) throw new InvalidArgumentError('maxSteps', 'must be a positive integer');
  if (!Number.isInteger(budget.maxChars) || budget.maxChars < 1) throw new InvalidArgumentError('maxChars', 'must be a positive integer');
  const ranges: Array<{ from: number; to: number }> = [];
  let from = 0;
  let chars = 0;
  steps.forEach((step, i) => {
    const size = Math.min(step.length, budget.maxChars);
    if (i > from && (i - from >= budget.maxSteps || chars + size > budget.maxChars)) {
      ranges.push({ from, to: i });
      from = i;
      chars = 0;
    }
    chars += size;
  });
  if (steps.length > 0) ranges.push({ from, to: steps.length });
  return ranges.map((range, i) => ({ index: i + 1, count: ranges.length, ...range }));
}

/** Where a chunk's re-ask chain is found: the generation key alone for a one-chunk labeling (as before chunks existed). */
export function chunkChainKey(generationKey: string, chunk?: { index: number; count: number } | null): string {
  return chunk === undefined || chunk === null || chunk.count <= 1 ? generationKey : `${generationKey}#${chunk.index}/${chunk.count}`;
}

/** One chunk's (or one whole answer's) resolved labeling. */
export interface ChunkOutcome {
  symbols: string[] | null;
  outcome: 'labelled' | 'invalid' | 'unlabelled';
  attempts: number | null;
  coercedUnknown: string[];
  /** When invalid: the last attempt's `reason: detail`. */
  failure?: string;
}

/**
 * Joins the chunks of one labeling: every chunk labelled = the symbols in order (attempts = the
 * most any chunk needed); the first invalid chunk makes it invalid with "chunk k/n: reason";
 * otherwise a chunk not answered (yet) leaves it unlabelled.
 */
export function reassembleChunks(chunks: readonly ChunkOutcome[]): ChunkOutcome {
  if (chunks.length === 0) throw new InvalidArgumentError('chunks', 'needs at least one chunk');
  if (chunks.length === 1) return chunks[0] as ChunkOutcome;
  const invalid = chunks.findIndex((c) => c.outcome === 'invalid');
  if (invalid >= 0) {
    const bad = chunks[invalid] as ChunkOutcome;
    return {
      symbols: null,
      outcome: 'invalid',
      attempts: bad.attempts,
      coercedUnknown: [],
      failure: `chunk ${invalid + 1}/${chunks.length}: ${bad.failure ?? 'invalid'}`,
    };
  }
  if (chunks.some((c) => c.outcome !== 'labelled')) return { symbols: null, outcome: 'unlabelled', attempts: null, coercedUnknown: [] };
  return {
    symbols: chunks.flatMap((c) => c.symbols ?? []),
    outcome: 'labelled',
    attempts: Math.max(...chunks.map((c) => c.attempts ?? 1)),
    coercedUnknown: chunks.flatMap((c) => c.coercedUnknown),
  };
}
