import { seededOrder } from '../seeded-order.js';
import { InvalidArgumentError } from '../../core/errors.js';
import type { ChatMessage, DecodingParams } from '../../models/types.js';
import type { CellSpec } from '../../store/types.js';
import { listStimuli, type PerturbationSet, type PerturbationStimulus, type PerturbationTier } from '../perturbations.js';
import type { Question } from '../questions.js';

/**
 * s_cot of z = [s_cot; p; x] (DriftLens §5.1, App. I.1): the reasoning-oriented system
 * instruction. Written here (the paper does not publish it); it asks for the same step
 * format the rewrite and the GRPO format reward use.
 */
export const DPO_REASONING_INSTRUCTION = [
  'You are a careful assistant. Before answering, reason about the question step by step.',
  'Decide which parts of the message bear on the question and which do not; details about the user that do not change the right answer should not change your reasoning.',
  'Write your reasoning as numbered steps inside <think> tags, one idea per step, then give your final answer inside <answer> tags:',
  '<think><step_1>…</step_1><step_2>…</step_2>…</think><answer>…</answer>',
].join('\n');

/** Candidate sampling of the paper: temperature 1.0, top-p 0.95. */
export const DPO_CANDIDATE_PARAMS: Readonly<DecodingParams> = Object.freeze({ temperature: 1.0, topP: 0.95, maxTokens: 2048 });

/** One (question, persona) prompt of the DPO data. */
export interface DpoPrompt {
  /** `${questionId}::${personaId}`. */
  id: string;
  question: Question;
  persona: PerturbationStimulus;
}

/**
 * Personas for one question: `count` distinct stimuli of the given tiers, drawn without
 * replacement by a seeded ranking that depends only on (seed, question id, stimulus id), so
 * adding questions never changes the personas of the others.
 */
export function samplePersonas(
  set: PerturbationSet,
  questionId: string,
  count: number,
  seed: number,
  tiers: readonly PerturbationTier[] = ['persona'],
): PerturbationStimulus[] {
  if (!Number.isInteger(count) || count < 1) throw new InvalidArgumentError('personasPerQuestion', `must be a positive integer, got ${count}`);
  const pool = listStimuli(set).filter((stimulus) => tiers.includes(stimulus.tier) && stimulus.text !== '');
  if (pool.length === 0) throw new InvalidArgumentError('perturbations', `holds no stimulus of tier ${tiers.join(' or ')}`);
  if (count > pool.length) {
    throw new InvalidArgumentError('personasPerQuestion', `asks for ${count} personas but the set has ${pool.length}`);
  }
  return seededOrder(pool, seed, questionId, (stimulus) => stimulus.id).slice(0, count);
}

/**
 * The messages of z: with the instruction, [system: s_cot, user: p + "\n" + x]; without it,
 * [user: p + "\n" + x]. The persona is the line before the question (paper placement).
 */
export function buildDpoPromptMessages(question: string, persona: string, withInstruction: boolean): ChatMessage[] {
  if (question.trim() === '') throw new InvalidArgumentError('question', 'must be non-empty');
  if (/[\r\n]/.test(persona)) throw new InvalidArgumentError('persona', 'must be a single line');
  const user: ChatMessage = { role: 'user', content: `${persona}\n${question.trim()}` };
  return withInstruction ? [{ role: 'system', content: DPO_REASONING_INSTRUCTION }, user] : [user];
}

export interface CandidatePlanOptions {
  questions: readonly Question[];
  perturbations: PerturbationSet;
  generator: string;
  personasPerQuestion: number;
  /** N candidates per (question, persona); default 10. */
  candidates?: number;
  /** How many of them get s_cot; default ⌈N/2⌉ (the paper: 5 of 10). */
  withInstruction?: number;
  params?: DecodingParams;
  tiers?: readonly PerturbationTier[];
  seed?: number;
}

export interface CandidatePlan {
  prompts: DpoPrompt[];
  /** Cells in prompt order, N per prompt: the first `withInstruction` use s_cot. */
  cells: CellSpec[];
}

/** The candidate-generation stage as cells (pure, deterministic). */
export function buildCandidatePlan(options: CandidatePlanOptions): CandidatePlan {
  const n = options.candidates ?? 10;
  if (!Number.isInteger(n) || n < 2) throw new InvalidArgumentError('candidates', `must be an integer ≥ 2, got ${n}`);
  const withCount = options.withInstruction ?? Math.ceil(n / 2);
  if (!Number.isInteger(withCount) || withCount < 0 || withCount > n) {
    throw new InvalidArgumentError('withInstruction', `must be an integer from 0 to ${n}, got ${withCount}`);
  }
  if (options.questions.length === 0) throw new InvalidArgumentError('questions', 'needs at least one question');
  const seed = options.seed ?? 42;
  const params = { ...(options.params ?? DPO_CANDIDATE_PARAMS) };
  const prompts: DpoPrompt[] = [];
  const cells: CellSpec[] = [];
  for (const question of options.questions) {
    for (const persona of samplePersonas(options.perturbations, question.id, options.personasPerQuestion, seed, options.tiers)) {
      const prompt: DpoPrompt = { id: `${question.id}::${persona.id}`, question, persona };
      prompts.push(prompt);
      for (let index = 0; index < n; index++) {
        const withInstruction = index < withCount;
        // The sample index counts within each instruction arm, so the two arms are distinct requests anyway.
        const sample = withInstruction ? index : index - withCount;
        cells.push({
          request: {
            model: options.generator,
            messages: buildDpoPromptMessages(question.text, persona.text, withInstruction),
            params: { ...params },
            sample,
          },
          labels: {
            experiment: 'memory-dpo',
            stage: 'candidate',
            prompt_id: prompt.id,
            question_id: question.id,
            persona_id: persona.id,
            persona_category: persona.category,
            with_instruction: withInstruction,
            candidate: index,
          },
        });
      }
    }
  }
  return { prompts, cells };
}
