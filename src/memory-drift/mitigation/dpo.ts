import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { InputError } from '../../core/errors.js';
import { packageVersion } from '../../core/version.js';
import type { AuditRunContext, StagedAuditRunner } from '../../experiment/audit.js';
import { runAudit } from '../../experiment/run-audit.js';
import type { ParsedItem, StageRuntime } from '../../experiment/runtime.js';
import type { RunCellsResult } from '../../store/runner.js';
import type { CellResult } from '../../store/types.js';
import { loadBuiltinPerturbations, loadPerturbationsFile } from '../perturbations.js';
import { loadBuiltinQuestions, loadQuestionsFile } from '../questions.js';
import { buildCandidatePlan, buildDpoPromptMessages, type CandidatePlan, type DpoPrompt } from './candidates.js';
import type { DpoConfig } from './dpo-config.js';
import { DPO_JUDGE_PARAMS, type DpoJudgeVerdict, dpoJudgeItem } from './dpo-judge.js';
import { type DataCard, mixPreferences, type PreferenceRecord, quickSubset, renderDataCardMarkdown, toJsonl, toOpenRlhfRow, toTrlRow } from './export.js';
import { buildRewriteMessages, buildRewriteReaskMessages, DPO_REWRITE_PARAMS, parseRewriteOutput, type RewriteRole } from './rewrite.js';
import { type JudgedCandidate, selectDpoPair } from './select.js';
import { filterExternalPairs, parseExternalPreferences } from './tulu.js';

export interface DpoRunResult {
  runId: string;
  resumed: boolean;
  /** False when a stage stopped early (budget, Ctrl-C): nothing is final, re-run to resume. */
  complete: boolean;
  prompts: DpoPrompt[];
  /** Judged candidates per prompt id (for GRPO references and inspection). */
  candidates: Map<string, JudgedCandidate[]>;
  sym: PreferenceRecord[];
  mixed: PreferenceRecord[];
  quick: PreferenceRecord[];
  card: DataCard;
  /** Dollars over priced cells; `unpricedCells` had no known price (their cost is unknown). */
  spendUsd: number;
  unpricedCells: number;
}

function increment(record: Record<string, number>, key: string, by = 1): void {
  record[key] = (record[key] ?? 0) + by;
}

interface DpoInput {
  questionSource: string;
  questions: number;
  plan: CandidatePlan;
}

/** What the DPO run's stages produce (runAudit adds the run id, spend and stops). */
type DpoStagesResult = Omit<DpoRunResult, 'runId' | 'resumed' | 'spendUsd' | 'unpricedCells'>;

const stopped = (stage: RunCellsResult) => stage.interrupted || stage.stopReason !== null;

/**
 * `echolens memory dpo-pairs` as an audit runner: candidates → judge (re-asks) → selection →
 * optional rewrite → mix with filtered external pairs → data card. `runAudit` opens the run,
 * records its stages (the run is done only when each is complete), tallies one budget over them
 * and handles Ctrl-C, as for the audits; a second run with the same config calls nothing.
 */
export const dpoPairsRunner: StagedAuditRunner<DpoConfig, DpoInput, DpoStagesResult> = {
  name: 'memory-dpo',
  limits: () => ({}),
  async prepare(config) {
    const questionSet = config.questions.file ? loadQuestionsFile(config.questions.file) : loadBuiltinQuestions();
    const questions = config.questions.limit ? questionSet.questions.slice(0, config.questions.limit) : questionSet.questions;
    const perturbations = config.perturbations.file ? loadPerturbationsFile(config.perturbations.file) : loadBuiltinPerturbations();
    const plan = buildCandidatePlan({
      questions,
      perturbations,
      generator: config.generator,
      personasPerQuestion: config.personasPerQuestion,
      candidates: config.candidates,
      ...(config.withInstruction !== undefined ? { withInstruction: config.withInstruction } : {}),
      params: { ...config.params },
      tiers: config.perturbations.tiers,
      seed: config.seed,
    });
    return { questionSource: questionSet.source, questions: questions.length, plan };
  },
  plan: (_config, input) => input.plan.cells,
  manifestOptions: (_config, input) => ({ questionSource: input.questionSource }),
  stages: (config, _input, specs) => [
    { name: 'dpo candidates', expected: specs.length },
    { name: 'dpo judge', expected: null },
    ...(config.rewrite ? [{ name: 'dpo rewrite', expected: null }] : []),
  ],
  execute: (context) => executeDpoPairs(context),
};

/** Runs `dpoPairsRunner` (library entry point; the CLI's `memory dpo-pairs`). */
export async function runDpoPairs(config: DpoConfig, db: string, runtime: StageRuntime = {}): Promise<DpoRunResult> {
  const run = await runAudit(dpoPairsRunner, config, db, { runtime, seed: config.seed });
  return {
    ...run.result,
    runId: run.runId,
    resumed: run.resumed,
    complete: run.result.complete && !run.interrupted,
    spendUsd: run.spendUsd,
    unpricedCells: run.unpricedCells,
  };
}

async function executeDpoPairs(context: AuditRunContext<DpoConfig, DpoInput>): Promise<DpoStagesResult> {
  const { config, input, runId } = context;
  const { plan } = input;
  let complete = true;
  const generation = await context.stage(context.specs, 'dpo candidates');
  if (stopped(generation)) complete = false;

  const candidateCounts: Record<string, number> = { planned: plan.cells.length, done: 0, empty: 0, failed: 0, pending: 0 };
  const judgeItems: ParsedItem<DpoJudgeVerdict>[] = [];
  const judgeOwners: { promptId: string; candidate: JudgedCandidate }[] = [];
  const byPrompt = new Map<string, JudgedCandidate[]>(plan.prompts.map((p) => [p.id, []]));
  const promptById = new Map(plan.prompts.map((p) => [p.id, p]));
  plan.cells.forEach((cell, i) => {
    const result = generation.results[i] as CellResult;
    const promptId = String(cell.labels.prompt_id);
    const prompt = promptById.get(promptId)!;
    const candidate: JudgedCandidate = {
      index: Number(cell.labels.candidate),
      text: result.text ?? '',
      withInstruction: cell.labels.with_instruction === true,
      key: result.key,
      status: 'unanswered',
    };
    byPrompt.get(promptId)!.push(candidate);
    if (result.status !== 'done' || result.text === null || result.text.trim() === '') {
      increment(candidateCounts, result.status === 'done' ? 'empty' : result.status);
      return;
    }
    increment(candidateCounts, 'done');
    judgeOwners.push({ promptId, candidate });
    const labels = { experiment: 'memory-dpo', stage: 'judge', prompt_id: promptId, candidate: candidate.index, attempt: 0 };
    judgeItems.push(dpoJudgeItem(config.judge, prompt.question.text, prompt.persona.text, result.text, labels));
  });

  const judgeCounts: Record<string, number> = { judged: 0, uncertain: 0, invalid: 0, unanswered: 0, reasked: 0 };
  // Run even with no items, so that the declared stage is recorded complete.
  if (complete) {
    const judged = await context.parsedStage(judgeItems, config.judgeReasks, 'dpo judge');
    if (judged.stages.some(stopped)) complete = false;
    judged.outcomes.forEach((outcome, i) => {
      const { candidate } = judgeOwners[i]!;
      if (outcome.attempts > 1) increment(judgeCounts, 'reasked');
      if (outcome.status === 'ok' && outcome.value.kind === 'judged') candidate.judgement = outcome.value.judgement;
      candidate.status = outcome.status === 'ok' ? outcome.value.kind : outcome.status === 'invalid' ? 'invalid' : 'unanswered';
      increment(judgeCounts, candidate.status);
    });
  }

  const withoutPair: Record<string, number> = { no_judged: 0, no_chosen: 0, no_rejected: 0 };
  const perCategory: Record<string, { prompts: number; pairs: number }> = {};
  const selected: { prompt: DpoPrompt; chosen: string; rejected: string }[] = [];
  for (const prompt of plan.prompts) {
    perCategory[prompt.persona.category] ??= { prompts: 0, pairs: 0 };
    perCategory[prompt.persona.category]!.prompts++;
    const outcome = selectDpoPair(byPrompt.get(prompt.id)!);
    if (outcome.kind !== 'pair') {
      increment(withoutPair, outcome.kind);
      continue;
    }
    selected.push({ prompt, chosen: outcome.pair.chosen.text, rejected: outcome.pair.rejected.text });
  }

  const rewriteCounts: Record<string, number> = {};
  let finalPairs = selected;
  if (config.rewrite && complete) {
    const rewrite = config.rewrite;
    const items: ParsedItem<string>[] = selected.flatMap(({ prompt, chosen, rejected }) =>
      (['chosen', 'rejected'] as RewriteRole[]).map((role) => ({
        spec: {
          request: {
            model: rewrite.model,
            messages: buildRewriteMessages(prompt.question.text, prompt.persona.text, role === 'chosen' ? chosen : rejected, role),
            params: { ...DPO_REWRITE_PARAMS },
            sample: 0,
          },
          labels: { experiment: 'memory-dpo', stage: 'rewrite', prompt_id: prompt.id, role, attempt: 0 },
        },
        parse: parseRewriteOutput,
        reask: (previous, bad) => {
          const parsed = parseRewriteOutput(bad);
          return buildRewriteReaskMessages(previous, bad, parsed.ok ? 'unknown' : parsed.error);
        },
      })),
    );
    const rewritten = await context.parsedStage(items, rewrite.reasks, 'dpo rewrite');
    if (rewritten.stages.some(stopped)) complete = false;
    Object.assign(rewriteCounts, { ok: 0, invalid: 0, unanswered: 0, pairs_dropped: 0 });
    finalPairs = [];
    selected.forEach((pair, p) => {
      const outcomes = [rewritten.outcomes[2 * p]!, rewritten.outcomes[2 * p + 1]!];
      for (const o of outcomes) increment(rewriteCounts, o.status === 'ok' ? 'ok' : o.status);
      const [c, r] = outcomes;
      if (c!.status === 'ok' && r!.status === 'ok') finalPairs.push({ ...pair, chosen: c!.value, rejected: r!.value });
      else increment(rewriteCounts, 'pairs_dropped');
    });
  }

  const sym: PreferenceRecord[] = finalPairs.map(({ prompt, chosen, rejected }) => ({
    id: `sym:${prompt.id}`,
    source: 'sympreference',
    // The exported prompt carries s_cot: z = [s_cot; p; x] (paper).
    prompt: buildDpoPromptMessages(prompt.question.text, prompt.persona.text, true),
    chosen,
    rejected,
    category: prompt.persona.category,
  }));
  for (const record of sym) perCategory[record.category!]!.pairs++;

  let externalCounts: Record<string, number> | null = null;
  let externalRecords: PreferenceRecord[] = [];
  if (config.external) {
    let text: string;
    try {
      text = readFileSync(config.external.file, 'utf8');
    } catch (error) {
      throw new InputError(`cannot read external preferences: ${(error as Error).message}`, { file: config.external.file });
    }
    const parsed = parseExternalPreferences(text, config.external.file, { subjectiveField: config.external.subjectiveField });
    const filtered = filterExternalPairs(parsed, config.external.maxTokenDifference);
    externalCounts = { read: parsed.length, ...filtered.dropped, kept: filtered.kept.length };
    externalRecords = filtered.kept.map((pair) => ({
      id: `ext:${pair.id}`,
      source: 'external',
      prompt: pair.prompt,
      chosen: pair.chosen,
      rejected: pair.rejected,
    }));
  }
  const mix = mixPreferences(sym, externalRecords, config.external ? config.external.mixRatio : 1, config.seed);
  const quick = quickSubset(mix.records.length > 0 ? mix.records : sym, config.quickSubset, config.seed);

  const card: DataCard = {
    name: config.name,
    createdBy: `echolens ${packageVersion()} (memory dpo-pairs, run ${runId})`,
    generator: config.generator,
    judge: config.judge,
    rewriter: config.rewrite?.model ?? null,
    seed: config.seed,
    params: {
      candidateParams: config.params,
      candidates: config.candidates,
      withInstruction: config.withInstruction ?? Math.ceil(config.candidates / 2),
      personasPerQuestion: config.personasPerQuestion,
      personaTiers: config.perturbations.tiers,
      judgeParams: DPO_JUDGE_PARAMS,
      judgeReasks: config.judgeReasks,
      mixRatio: config.external?.mixRatio ?? 1,
      maxTokenDifference: config.external?.maxTokenDifference ?? null,
      questionSource: input.questionSource,
    },
    counts: {
      questions: input.questions,
      prompts: plan.prompts.length,
      candidates: candidateCounts,
      judgements: judgeCounts,
      prompts_without_pair: withoutPair,
      rewrites: rewriteCounts,
      sympreference_pairs: sym.length,
      external: externalCounts,
      mixed: { total: mix.records.length, sympreference: mix.symUsed, external: mix.externalUsed },
      quick_subset: quick.length,
    },
    per_category: perCategory,
    files: {},
  };
  return { complete, prompts: plan.prompts, candidates: byPrompt, sym, mixed: mix.records, quick, card };
}

/** Writes the exports and the data card; returns the card with its file list filled in. */
export function writeDpoOutputs(out: string, result: DpoRunResult): DataCard {
  const sets = { sympreference: ['SymPreference', result.sym], mixed: ['mixed', result.mixed], quick: ['quick subset', result.quick] } as const;
  const files: Record<string, string> = {};
  for (const [format, toRow] of [
    ['trl', toTrlRow],
    ['openrlhf', toOpenRlhfRow],
  ] as const) {
    mkdirSync(join(out, format), { recursive: true });
    for (const [name, [label, records]] of Object.entries(sets)) {
      files[`${format} (${label})`] = `${format}/${name}.jsonl`;
      writeFileSync(join(out, format, `${name}.jsonl`), toJsonl(records.map((record) => toRow(record))));
    }
  }
  const card: DataCard = { ...result.card, files: { ...files, 'data card': 'data-card.json / data-card.md' } };
  writeFileSync(join(out, 'data-card.json'), `${JSON.stringify(card, null, 2)}\n`);
  writeFileSync(join(out, 'data-card.md'), renderDataCardMarkdown(card));
  return card;
}
