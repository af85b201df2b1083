import { z } from 'zod';
import { ConfigError } from '../core/errors.js';
import type { ChatMessage } from '../models/types.js';
import { countTokens } from '../models/token-count.js';
import { insertionTurns } from './interventions.js';
import type { InterventionTexts } from './stimuli.js';

/**
 * Anchor ablations (ContextEcho App. F/G: anchor size, placement, persistence), the design part,
 * pure. A config grid `anchorAblation: { arm, sizes, placements, turns }` plans, on the real arm
 * at the headline distance, one intervention cell per (size × placement × turns) beside the
 * `mitigations` arms; the analysis compares each with the unmitigated control (anchor-ablation-analysis.ts).
 *
 * - size: tokens of the inserted turns (o200k count). The arm's reminder is cut to whole
 *   sentences, or grown with the sentences of the long anchor (the same instruction stated at
 *   more length), until the inserted turns reach the size; a trailing announcement ("Here is an
 *   example …:") stays last and the demonstration pair is kept. The measured count is recorded.
 * - placement: `before-probe` (the paper's: after the session prefix), `session-start` (before
 *   the prefix, after the system prompt), or `both`.
 * - turns: generic filler exchanges between the anchor and the probe (turns since the anchor).
 */

export const ANCHOR_PLACEMENTS = ['before-probe', 'session-start', 'both'] as const;
export type AnchorPlacement = (typeof ANCHOR_PLACEMENTS)[number];
export const ABLATION_ARMS = ['a-anchor', 'a-anchor-reference', 'v0', 'v2', 'long-anchor'] as const;

export const anchorAblationSchema = z
  .object({
    /** The intervention whose anchor is varied. */
    arm: z.enum(ABLATION_ARMS).default('a-anchor'),
    /** Sizes of the inserted turns in tokens; absent = the arm's own text only. */
    sizes: z.array(z.number().int().positive().max(4000, 'an anchor size is at most 4,000 tokens')).min(1).optional(),
    placements: z.array(z.enum(ANCHOR_PLACEMENTS)).min(1).default(['before-probe']),
    /** Turns since the anchor: generic exchanges between the anchor and the probe. */
    turns: z.array(z.number().int().nonnegative()).min(1).default([0]),
  })
  .strict();
export type AnchorAblationConfig = z.infer<typeof anchorAblationSchema>;

export interface AnchorVariant {
  /** The cell's `mitigation` label, e.g. `ablation:a-anchor:200t:before-probe:2`. */
  label: string;
  arm: (typeof ABLATION_ARMS)[number];
  /** Requested size in tokens (null = the arm's own text). */
  size: number | null;
  /** Measured tokens of the inserted turns. */
  tokens: number;
  placement: AnchorPlacement;
  turns: number;
  /** The inserted turns. */
  insertion: ChatMessage[];
}

const ABLATION_PREFIX = 'ablation:';

/** Is this `mitigation` label an anchor-ablation cell? */
export const isAblationLabel = (mitigation: string) => mitigation.startsWith(ABLATION_PREFIX);

function sentences(text: string): string[] {
  return (text.match(/[^.!?:]+[.!?:]+(?:\s|$)|[^.!?:]+$/gu) ?? []).map((s) => s.trim()).filter((s) => s.length > 0);
}

const tokensOf = (turns: readonly ChatMessage[]) => turns.reduce((n, m) => n + countTokens(m.content), 0);

/** The arm's inserted turns resized to about `size` tokens (see the module comment). */
export function resizedInsertion(arm: AnchorVariant['arm'], texts: InterventionTexts, size: number | null): ChatMessage[] {
  const base = insertionTurns(arm, texts);
  if (size === null || base.length === 0) return base;
  const [first, ...rest] = base as [ChatMessage, ...ChatMessage[]];
  const own = sentences(first.content);
  const tail = own.length > 1 && own[own.length - 1]?.endsWith(':') ? (own.pop() as string) : null;
  const pool = [...own, ...sentences(texts.longAnchor).filter((s) => !s.endsWith(':') && !own.includes(s) && s !== tail)];
  const build = (k: number): ChatMessage[] => [{ role: 'user', content: [...pool.slice(0, k), ...(tail ? [tail] : [])].join(' ') }, ...rest];
  for (let k = 1; k <= pool.length; k++) {
    const turns = build(k);
    if (tokensOf(turns) >= size) return turns;
  }
  return build(pool.length);
}

/** Every cell of the grid, in config order (sizes × placements × turns). */
export function anchorVariants(ablation: AnchorAblationConfig, texts: InterventionTexts): AnchorVariant[] {
  const most = Math.max(...ablation.turns);
  if (most > texts.decayExchanges.length) {
    throw new ConfigError(
      `anchorAblation.turns: ${most} turns since the anchor need ${most} filler exchanges; the materials have ${texts.decayExchanges.length}`,
    );
  }
  const out: AnchorVariant[] = [];
  for (const size of ablation.sizes ?? [null]) {
    const insertion = resizedInsertion(ablation.arm, texts, size);
    const tokens = tokensOf(insertion);
    for (const placement of ablation.placements) {
      for (const turns of ablation.turns) {
        out.push({
          label: `${ABLATION_PREFIX}${ablation.arm}:${size === null ? 'own' : `${size}t`}:${placement}:${turns}`,
          arm: ablation.arm,
          size,
          tokens,
          placement,
          turns,
          insertion,
        });
      }
    }
  }
  return out;
}
