import { getOrInsert } from '../core/get-or-insert.js';

/**
 * The sanity check every audit's verdict passes through: answers that cannot come from a model
 * reading its requests. A misconfigured endpoint (a fixed reply, a mock left in place) or a cache
 * in front of it keyed on too little (the last message only) makes every arm look alike, so every
 * drift statistic is zero with a zero-width interval — which would read as a clean PASS. When a
 * target's answers look like that, the run's verdict is "not computable", with the reason.
 * Pure: it reads the cells it is given.
 */

/** The part of a cell the check reads (a store's `RunCellResultRecord` has it). */
export interface SanityCell {
  model: string;
  /** The cell's key: different requests have different keys. */
  key: string;
  /** The cell's labels in the run: `stage` says which cells are the targets' answers, `arm` / `condition` the arm. */
  labels: Readonly<Record<string, unknown>>;
  result: { status: string; text: string | null; toolCalls?: readonly { name: string; arguments?: unknown }[] };
}

/** Stages whose cells are the answers of the models under test (judges and labelers may answer alike). */
const ANSWER_STAGES = new Set(['target', 'generation']);
/** Labels naming the arm (the context a prompt is asked in). */
const ARM_LABELS = ['arm', 'condition', 'tier', 'stimulus_id', 'anchorArm'];

/** Fewest answered cells of a target with different requests before the check judges it. */
export const SANITY_MIN_CELLS = 4;
/** Fewest prompts asked in several arms before "answers ignore the arm" is judged. */
export const SANITY_MIN_GROUPS = 3;

function answerOf(cell: SanityCell): string {
  const calls = cell.result.toolCalls ?? [];
  const text = (cell.result.text ?? '').trim();
  return calls.length === 0 ? text : `${text}\u0000${JSON.stringify(calls.map((c) => [c.name, c.arguments ?? null]))}`;
}

const excerpt = (text: string) => {
  const flat = text.replace(/\s+/gu, ' ');
  return JSON.stringify(flat.length > 60 ? `${flat.slice(0, 57)}…` : flat);
};

/**
 * The cell's labels without its arm: cells that differ only in their arm share it. The key is the
 * remaining names in code-unit order, then the JSON of each one's value; the names to keep, in
 * that order, are worked out once per set of label names (`kept`, one entry per label shape), not
 * sorted again for each of a paper-scale run's 28,800 cells.
 */
function promptKey(labels: Readonly<Record<string, unknown>>, kept: Map<string, { order: string[]; names: string }>): string {
  const shape = Object.keys(labels).join('\u0000');
  let known = kept.get(shape);
  if (known === undefined) {
    const order = Object.keys(labels)
      .filter((k) => !ARM_LABELS.includes(k))
      .sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    known = { order, names: JSON.stringify(order) };
    kept.set(shape, known);
  }
  let key = known.names;
  for (const name of known.order) key += `\u0001${JSON.stringify(labels[name]) ?? 'null'}`;
  return key;
}

/** The arm labels' values of a cell, as one string (cells in the same arm share it). */
function armKey(labels: Readonly<Record<string, unknown>>): string {
  let key = '';
  for (const name of ARM_LABELS) key += `\u0001${JSON.stringify(labels[name] ?? null)}`;
  return key;
}

/**
 * The reason the run's answers are not usable, or null. Two rules, per model under test:
 * - one distinct answer to all of at least SANITY_MIN_CELLS different requests;
 * - the same prompt asked in different arms (contexts) always gets the same answer, over at least
 *   SANITY_MIN_GROUPS prompts: the context never reached the model (a cache keyed on the last
 *   message, an endpoint that drops the history).
 */
export function answerSanity(cells: readonly SanityCell[]): string | null {
  // Each answered cell's answer, worked out once (model → key → [cell, answer]).
  const byModel = new Map<string, Map<string, { cell: SanityCell; answer: string }>>();
  for (const cell of cells) {
    if (!ANSWER_STAGES.has(String(cell.labels.stage)) || cell.result.status !== 'done') continue;
    const answer = answerOf(cell);
    if (answer === '') continue;
    const cellsOf = getOrInsert(byModel, cell.model, () => new Map());
    cellsOf.set(cell.key, { cell, answer });
  }
  const reasons: string[] = [];
  for (const [model, byKey] of byModel) {
    const answered = [...byKey.values()];
    if (answered.length < SANITY_MIN_CELLS) continue;
    const first = (answered[0] as { answer: string }).answer;
    if (answered.every((a) => a.answer === first)) {
      reasons.push(
        `${model} gave one and the same answer (${excerpt((answered[0] as { answer: string }).answer)}) to all ${answered.length} different requests: a likely endpoint or cache problem (a fixed reply, a mock, or a cache in front of the model), not a model reading its context`,
      );
      continue;
    }
    const groups = new Map<string, { arms: Set<string>; answers: Set<string> }>();
    const kept = new Map<string, { order: string[]; names: string }>();
    // Sets only grow: once one prompt has two answers in two arms, the context reached the model and
    // the rule cannot fire, so the rest of a healthy run's cells (a paper-scale run's 14,400) are not keyed.
    let reachedTheModel = false;
    for (const { cell, answer } of answered) {
      const key = promptKey(cell.labels, kept);
      const group = getOrInsert(groups, key, () => ({ arms: new Set<string>(), answers: new Set<string>() }));
      group.arms.add(armKey(cell.labels));
      group.answers.add(answer);
      if (group.arms.size >= 2 && group.answers.size >= 2) {
        reachedTheModel = true;
        break;
      }
    }
    if (reachedTheModel) continue;
    const asked = [...groups.values()].filter((g) => g.arms.size >= 2);
    if (asked.length >= SANITY_MIN_GROUPS && asked.every((g) => g.answers.size === 1)) {
      reasons.push(
        `${model} gave the same answer to each of ${asked.length} prompts whatever arm (context) it was asked in: the context never reached the model — a likely cache keyed on the last message, or an endpoint that drops the conversation`,
      );
    }
  }
  return reasons.length === 0 ? null : reasons.join('; ');
}
