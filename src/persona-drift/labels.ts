import { z } from 'zod';
import { labelDecoder } from '../experiment/labels.js';
import { groupReaskChains, type ParseResult, resolveReaskChain } from '../experiment/reask.js';
import type { CellLabels } from '../store/types.js';
import { type JudgeLabel, parseJudgeOutput } from './judge.js';

/**
 * The labels persona cells carry (written by plan.ts), read back through
 * validated decoders, and the judge re-ask chains resolved the one shared way
 * (experiment/reask.ts).
 */

const targetLabelsSchema = z.object({
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

const judgeLabelsSchema = z.object({
  stage: z.literal('judge'),
  judge: z.string(),
  targetKey: z.string(),
  attempt: z.number().int().nonnegative().optional(),
});

export type PersonaTargetLabels = z.infer<typeof targetLabelsSchema>;
export type PersonaJudgeLabels = z.infer<typeof judgeLabelsSchema>;

export const decodePersonaTargetLabels = labelDecoder(targetLabelsSchema, 'persona target');
export const decodePersonaJudgeLabels = labelDecoder(judgeLabelsSchema, 'persona judge');

/** A persona target cell's labels? (experiment and stage only; the decoder checks the rest). */
export function isPersonaTargetCell(labels: CellLabels): boolean {
  return labels.stage === 'target' && labels.experiment === 'persona';
}

export interface JudgeScore {
  score: 0 | 1 | 2 | 3;
  label: JudgeLabel;
  reason: string;
}

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
  const decoded = new Map<Cell, PersonaJudgeLabels>();
  for (const cell of cells) {
    if (access.labels(cell).stage === 'judge') decoded.set(cell, decodePersonaJudgeLabels(access.labels(cell), access.key(cell)));
  }
  const chains = groupReaskChains(
    decoded.keys(),
    (cell) => JSON.stringify([(decoded.get(cell) as PersonaJudgeLabels).targetKey, (decoded.get(cell) as PersonaJudgeLabels).judge]),
    (cell) => (decoded.get(cell) as PersonaJudgeLabels).attempt ?? 0,
  );
  const parseScore = scoreParser(access.parse ?? parseJudgeOutput);
  const out = new Map<string, Map<string, ResolvedVerdict<Cell>>>();
  for (const [name, chain] of chains) {
    const [targetKey, judge] = JSON.parse(name) as [string, string];
    const resolved = resolveReaskChain(chain, { text: access.text }, parseScore);
    const attemptOf = (cell: Cell) => (decoded.get(cell) as PersonaJudgeLabels).attempt ?? 0;
    let verdict: ResolvedVerdict<Cell> | undefined;
    if (resolved.status === 'ok') verdict = { judge, cell: resolved.cell, attempt: attemptOf(resolved.cell), verdict: resolved.value, error: null };
    else if (resolved.status === 'invalid') verdict = { judge, cell: resolved.cell, attempt: attemptOf(resolved.cell), verdict: null, error: resolved.error };
    else if (resolved.lastFailure) {
      verdict = { judge, cell: resolved.lastFailure.cell, attempt: attemptOf(resolved.lastFailure.cell), verdict: null, error: resolved.lastFailure.error };
    }
    if (verdict === undefined) continue;
    const byJudge = out.get(targetKey) ?? new Map<string, ResolvedVerdict<Cell>>();
    byJudge.set(judge, verdict);
    out.set(targetKey, byJudge);
  }
  return out;
}
