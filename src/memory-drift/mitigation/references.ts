import type { DpoPrompt } from './candidates.js';
import type { CachedLabeler } from './reward-labeler.js';
import { type JudgedCandidate, selectReferenceCandidate } from './select.js';

export interface ReferenceRecord {
  question_id: string;
  symbols: string[];
  question: string;
  response: string;
  /** Store key of the generation cell the reference came from. */
  source_key: string;
  helpfulness: number;
}

export interface ReferenceBuildResult {
  references: ReferenceRecord[];
  /** Questions without a usable reference, with the reason. */
  missing: { question_id: string; reason: string }[];
}

/**
 * o*(x) per question (App. I.2): among the judged candidates of all of the question's prompts,
 * the best non-distracted one (highest helpfulness; instruction arm and earlier prompts first
 * on ties), labelled once with the labeler.
 */
export async function buildReferences(
  prompts: readonly DpoPrompt[],
  candidates: ReadonlyMap<string, readonly JudgedCandidate[]>,
  labeler: CachedLabeler,
): Promise<ReferenceBuildResult> {
  const byQuestion = new Map<string, { prompt: DpoPrompt; candidates: JudgedCandidate[] }>();
  for (const prompt of prompts) {
    const entry = byQuestion.get(prompt.question.id) ?? { prompt, candidates: [] };
    entry.candidates.push(...(candidates.get(prompt.id) ?? []));
    byQuestion.set(prompt.question.id, entry);
  }
  const picks: { questionId: string; question: string; best: NonNullable<ReturnType<typeof selectReferenceCandidate>> }[] = [];
  const missing: ReferenceBuildResult['missing'] = [];
  for (const [questionId, entry] of byQuestion) {
    const ordered = [...entry.candidates.filter((c) => c.withInstruction), ...entry.candidates.filter((c) => !c.withInstruction)];
    const best = selectReferenceCandidate(ordered);
    if (best === null) missing.push({ question_id: questionId, reason: 'no confidently judged, non-distracted candidate' });
    else picks.push({ questionId, question: entry.prompt.question.text, best });
  }
  const labelled = await labeler.labelAll(picks.map((p) => p.best.text));
  const references: ReferenceRecord[] = [];
  picks.forEach((pick, i) => {
    const outcome = labelled[i]!;
    if (!outcome.ok) missing.push({ question_id: pick.questionId, reason: outcome.error });
    else if (outcome.symbols.length === 0) missing.push({ question_id: pick.questionId, reason: 'the selected answer has no steps' });
    else {
      references.push({
        question_id: pick.questionId,
        symbols: outcome.symbols,
        question: pick.question,
        response: pick.best.text,
        source_key: pick.best.key,
        helpfulness: pick.best.judgement.helpfulness,
      });
    }
  });
  return { references, missing };
}
