import type { DpoPrompt } from './candidates.js';
import type { AuditRunContext, StagedAuditRunner } from '../../experiment/audit.js';
import { runAudit } from '../../experiment/run-audit.js';
import type { StageRuntime } from '../../experiment/runtime.js';
import type { Ontology } from '../ontology.js';
import { CachedLabeler, type LabelerStage } from './reward-labeler.js';
import { type JudgedCandidate, selectReferenceCandidate } from './select.js';
import { getOrInsert } from '../../core/get-or-insert.js';

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
    getOrInsert(byQuestion, prompt.question.id, () => ({ prompt, candidates: [] })).candidates.push(...(candidates.get(prompt.id) ?? []));
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

/** What `memory references` records as its run's config. */
export interface ReferencesConfig {
  labeler: string;
  ontology: Ontology;
}

/** The judged candidates of a finished dpo-pairs run. */
export interface ReferencesInput {
  prompts: readonly DpoPrompt[];
  candidates: ReadonlyMap<string, readonly JudgedCandidate[]>;
}

const REFERENCE_STAGE = 'reference labels';

/** The run's labeller, its cells run as the stage `stage()` names (runAudit's parsedStage). */
export function stageLabeler<C extends ReferencesConfig, I>(context: AuditRunContext<C, I>, stage: () => string): CachedLabeler {
  const parsedStage: LabelerStage = (items, retries) => context.parsedStage(items, retries, stage());
  return new CachedLabeler({ store: context.store, runId: context.runId, labeler: context.config.labeler, ontology: context.config.ontology, parsedStage });
}

/** `memory references` as an audit runner: one labeler stage over the selected candidates. */
export const referencesRunner: StagedAuditRunner<ReferencesConfig, ReferencesInput, ReferenceBuildResult> = {
  name: 'memory-references',
  limits: () => ({}),
  prepare: () => Promise.reject(new Error('memory references is given the candidates of a dpo-pairs run (runAudit input)')),
  plan: () => [],
  manifestOptions: () => ({}),
  stages: () => [{ name: REFERENCE_STAGE, expected: null }],
  async execute(context) {
    const labeler = stageLabeler(context, () => REFERENCE_STAGE);
    const built = await buildReferences(context.input.prompts, context.input.candidates, labeler);
    if (labeler.stagesRun === 0) await context.parsedStage([], 0, REFERENCE_STAGE);
    return built;
  },
};

/** Runs `referencesRunner` in the store `db` (seeded like the dpo-pairs config it follows). */
export async function runReferences(config: ReferencesConfig, input: ReferencesInput, db: string, seed: number, runtime: StageRuntime = {}) {
  return runAudit(referencesRunner, config, db, { runtime, input, specs: [], seed });
}
