import { z } from 'zod';
import { labelDecoder } from '../experiment/labels.js';
import { type ParseResult, resolveReaskChain } from '../experiment/reask.js';
import type { CellLabels } from '../store/types.js';
import { type JudgeVerdict, parseJudgeOutput } from './judge.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * The labels persona cells carry (written by plan.ts), read back through
 * validated decoders, and the judge re-ask chains resolved the one shared way
 * (experiment/reask.ts).
 */

export const targetLabelsSchema = z.object({
  experiment: z.literal('persona'),
  stage: z.literal('target'),
  target: z.string(),
  session: z.string(),
  position: z.string(),
  positionValue: z.number(),
  compactionIndex: z.number().int().nullable().optional(),
  compactionSide: z.enum(['pre', 'post']).nullable().optional(),
  arm: z.string(),
  mitigation: z.string(),
  distance: z.string(),
  surface: z.enum(['probe', 'stressor', 'contract']),
  item: z.string(),
  category: z.string(),
  paraphrase: z.number().int(),
  sample: z.number().int(),
  systemPrompt: z.string().nullable().optional(),
  selectedBy: z.string().nullable().optional(),
  continuationMessages: z.number().int().nullable().optional(),
  continuationClipped: z.string().nullable().optional(),
  framed: z.boolean().nullable().optional(),
  anchorArm: z.string().optional(),
  anchorSize: z.number().int().nullable().optional(),
  anchorTokens: z.number().int().optional(),
  anchorPlacement: z.enum(['before-probe', 'session-start', 'both']).optional(),
  anchorTurns: z.number().int().optional(),
});

export const judgeLabelsSchema = z.object({
  stage: z.literal('judge'),
  judge: z.string(),
  targetKey: z.string(),
  attempt: z.number().int().nonnegative().optional(),
});

// Plain checks of the two schemas for the labels as plan.ts writes them (experiment/labels.ts):
// a paper-scale report decodes 28,800 cells' labels, and the schema's parse was a tenth of its time.
const isString = (v: unknown): boolean => typeof v === 'string';
const isInteger = (v: unknown): boolean => Number.isSafeInteger(v);
const absent = (v: unknown): boolean => v === undefined || v === null;

/** Target labels the schema accepts (false = let the schema decide, and name what is wrong). */
export function plainTargetLabels(l: CellLabels): boolean {
  return (
    l.experiment === 'persona' &&
    l.stage === 'target' &&
    isString(l.target) &&
    isString(l.session) &&
    isString(l.position) &&
    typeof l.positionValue === 'number' &&
    Number.isFinite(l.positionValue) &&
    (absent(l.compactionIndex) || isInteger(l.compactionIndex)) &&
    (absent(l.compactionSide) || l.compactionSide === 'pre' || l.compactionSide === 'post') &&
    isString(l.arm) &&
    isString(l.mitigation) &&
    isString(l.distance) &&
    (l.surface === 'probe' || l.surface === 'stressor' || l.surface === 'contract') &&
    isString(l.item) &&
    isString(l.category) &&
    isInteger(l.paraphrase) &&
    isInteger(l.sample) &&
    (absent(l.systemPrompt) || isString(l.systemPrompt)) &&
    (absent(l.selectedBy) || isString(l.selectedBy)) &&
    (absent(l.continuationMessages) || isInteger(l.continuationMessages)) &&
    (absent(l.continuationClipped) || isString(l.continuationClipped)) &&
    (absent(l.framed) || typeof l.framed === 'boolean') &&
    (l.anchorArm === undefined || isString(l.anchorArm)) &&
    (absent(l.anchorSize) || isInteger(l.anchorSize)) &&
    (l.anchorTokens === undefined || isInteger(l.anchorTokens)) &&
    (l.anchorPlacement === undefined || l.anchorPlacement === 'before-probe' || l.anchorPlacement === 'session-start' || l.anchorPlacement === 'both') &&
    (l.anchorTurns === undefined || isInteger(l.anchorTurns))
  );
}

/** Judge labels the schema accepts (false = let the schema decide, and name what is wrong). */
export function plainJudgeLabels(l: CellLabels): boolean {
  return l.stage === 'judge' && isString(l.judge) && isString(l.targetKey) && (l.attempt === undefined || (isInteger(l.attempt) && (l.attempt as number) >= 0));
}

export const decodePersonaTargetLabels = labelDecoder(targetLabelsSchema, 'persona target', plainTargetLabels);
export const decodePersonaJudgeLabels = labelDecoder(judgeLabelsSchema, 'persona judge', plainJudgeLabels);

/** A persona target cell's labels? (experiment and stage only; the decoder checks the rest). */
export function isPersonaTargetCell(labels: CellLabels): boolean {
  return labels.stage === 'target' && labels.experiment === 'persona';
}

export type JudgeScore = Omit<Extract<JudgeVerdict, { ok: true }>, 'ok'>;

/** The verdict a judge chain resolves to; `score: null` = invalid after the re-asks. */
export interface ResolvedVerdict<Cell> {
  judge: string;
  /** The cell whose output decided (the parsed one, else the last failed one). */
  cell: Cell;
  attempt: number;
  verdict: JudgeScore | null;
  error: string | null;
}

/** A judge output parser (strict by default; replication mode may use the lenient one). */
export type JudgeOutputParser = (text: string) => ReturnType<typeof parseJudgeOutput>;

const scoreParser =
  (parse: JudgeOutputParser) =>
  (text: string): ParseResult<JudgeScore> => {
    const v = parse(text);
    return v.ok ? { ok: true, value: { score: v.score, label: v.label, reason: v.reason } } : { ok: false, error: v.error };
  };

/**
 * Every judge chain of a run: target cell key → judge → verdict. A chain whose
 * first call never answered has no verdict (the judge is absent for that cell).
 */
export function resolveJudgeVerdicts<Cell>(
  cells: Iterable<Cell>,
  access: { labels(cell: Cell): CellLabels; key(cell: Cell): string; text(cell: Cell): string | null; parse?: JudgeOutputParser },
): Map<string, Map<string, ResolvedVerdict<Cell>>> {
  // Chains grouped by target cell, then judge, then attempt (nested maps: no key string per cell).
  const chains = new Map<string, Map<string, Map<number, Cell>>>();
  const attempts = new Map<Cell, number>();
  for (const cell of cells) {
    const labels = access.labels(cell);
    if (labels.stage !== 'judge') continue;
    const l = decodePersonaJudgeLabels(labels, access.key(cell));
    const attempt = l.attempt ?? 0;
    attempts.set(cell, attempt);
    const byJudge = getOrInsert(chains, l.targetKey, () => new Map());
    getOrInsert(byJudge, l.judge, () => new Map()).set(attempt, cell);
  }
  const parseScore = scoreParser(access.parse ?? parseJudgeOutput);
  const reader = { text: access.text };
  const attemptOf = (cell: Cell) => attempts.get(cell) ?? 0;
  const out = new Map<string, Map<string, ResolvedVerdict<Cell>>>();
  for (const [targetKey, byJudge] of chains) {
    for (const [judge, chain] of byJudge) {
      const resolved = resolveReaskChain(chain, reader, parseScore);
      let verdict: ResolvedVerdict<Cell> | undefined;
      if (resolved.status === 'ok') verdict = { judge, cell: resolved.cell, attempt: attemptOf(resolved.cell), verdict: resolved.value, error: null };
      else if (resolved.status === 'invalid') verdict = { judge, cell: resolved.cell, attempt: attemptOf(resolved.cell), verdict: null, error: resolved.error };
      else if (resolved.lastFailure) {
        verdict = { judge, cell: resolved.lastFailure.cell, attempt: attemptOf(resolved.lastFailure.cell), verdict: null, error: resolved.lastFailure.error };
      }
      if (verdict === undefined) continue;
      getOrInsert(out, targetKey, () => new Map()).set(judge, verdict);
    }
  }
  return out;
}
