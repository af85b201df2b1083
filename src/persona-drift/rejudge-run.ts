import { ConfigError } from '../core/errors.js';
import { spendOrNull } from '../core/money.js';
import type { AuditRunner, AuditRunSummary } from '../experiment/audit.js';
import { budgetProblems, type PreflightProblem, PreflightError, preflightProblems, splitKeyProblems } from '../experiment/preflight.js';
import { runAudit } from '../experiment/run-audit.js';
import { incompleteRunMessage } from '../experiment/run-completeness.js';
import type { StageRuntime } from '../experiment/runtime.js';
import type { StageTally } from '../experiment/stage-tally.js';
import { estimateCells, type PlanEstimate } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import type { RunStore } from '../store/run-store.js';
import { type PersonaConfig, personaConfigSchema } from './config.js';
import { isRejudgeStage, planRejudge, type RejudgePlan } from './rejudge.js';
import { PERSONA_EXPERIMENT, personaRunId, personaRunTexts } from './run.js';

/**
 * `persona rejudge`, the I/O half: reads a persona run's stored target answers, plans the new
 * judges' cells (rejudge.ts) and runs them through the shared lifecycle attached to that run —
 * one stage per judge appended to its stage ledger, cells cached and resumable, spend tallied.
 * docs/interchange.md ("Re-judging a run") says why the cells attach to the run.
 */

export interface PreparedRejudge {
  runId: string;
  config: PersonaConfig;
  plan: RejudgePlan;
}

/** Reads the run (the latest persona run, or the one named) and plans the judges' cells; writes nothing. */
export async function prepareRejudge(store: RunStore, judges: readonly string[], runId?: string): Promise<PreparedRejudge> {
  const id = await personaRunId(store, runId);
  const run = await store.requireRun(id);
  const parsed = personaConfigSchema.safeParse(run.manifest.config);
  if (!parsed.success) throw new ConfigError(`run ${id} has no readable persona config: ${parsed.error.issues[0]?.message ?? ''}`, { field: 'run' });
  // The run's own texts (materials read again from the same clone, checked unchanged) and procedure.
  // The run's own stages must be complete; an earlier rejudge left unfinished is what this one resumes.
  const stages = await store.stages(id);
  const rejudging = stages.some((s) => isRejudgeStage(s.stage));
  const incomplete = incompleteRunMessage(
    rejudging ? { status: 'done' } : run,
    stages.filter((s) => !isRejudgeStage(s.stage)),
  );
  if (incomplete !== null)
    throw new ConfigError(
      `run ${id}: ${incomplete.replace(/ — re-run the same command to finish$/u, '')} — finish it with \`echolens persona run\` before re-judging`,
      { field: 'run' },
    );
  const { materials } = await personaRunTexts(store, id);
  const cells = (await store.cellResultsOfRun(id)).map((cell) => ({ key: cell.key, labels: cell.labels, status: cell.result.status, text: cell.result.text }));
  return { runId: id, config: parsed.data, plan: planRejudge(parsed.data, materials.judgeRubric, cells, judges, id) };
}

/** Every judge cell of the plan (first attempts), for estimates. */
function planSpecs(plan: RejudgePlan) {
  return plan.stages.flatMap((stage) => stage.items.map((item) => item.spec));
}

/** Tokens and dollars of the plan's judge cells (re-asks not counted); calls nothing. */
export function estimateRejudge(prepared: PreparedRejudge, priceFile?: string): PlanEstimate {
  return estimateCells(planSpecs(prepared.plan), loadPriceTable(priceFile ? { file: priceFile } : {}));
}

/**
 * Checks the judge references (each resolves to a provider or simulation, its API key is set) and,
 * with a budget, the plan's estimate against it. Throws PreflightError listing every problem; a dry
 * run gets missing keys back as warnings.
 */
export function preflightRejudge(
  prepared: PreparedRejudge,
  judges: readonly string[],
  runtime: StageRuntime = {},
): { estimate?: PlanEstimate; keyWarnings: PreflightProblem[] } {
  const found = preflightProblems({
    models: judges.map((ref, i) => ({ ref, field: `--judge ${i + 1}` })),
    ...(runtime.adapterFor !== undefined ? { skipKeys: true } : {}),
  });
  const { problems, keyWarnings } = runtime.dryRun ? splitKeyProblems(found) : { problems: found, keyWarnings: [] };
  const maxCost = runtime.maxCostUsd ?? prepared.config.limits.maxCostUsd;
  let estimate: PlanEstimate | undefined;
  if (problems.length === 0 && maxCost !== undefined && maxCost !== null) {
    estimate = estimateRejudge(prepared, runtime.priceFile);
    problems.push(...budgetProblems(estimate, maxCost));
  }
  if (problems.length > 0) throw new PreflightError(problems);
  return { ...(estimate ? { estimate } : {}), keyWarnings };
}

export interface RejudgeResult extends AuditRunSummary {
  /** Probe answers judged. */
  answers: number;
  judges: string[];
  /** Judge cells requested (answers × judges). */
  judgeCells: number;
  invalidJudgements: number;
  /** Calls made (0 when every cell was cached). */
  calls: number;
  stages: StageTally[];
}

/** Runs the prepared judge cells as stages of the run itself (cached, resumable, within the budget). */
export async function rejudgePersonaRun(db: string, prepared: PreparedRejudge, runtime: StageRuntime = {}): Promise<RejudgeResult> {
  const { plan, config } = prepared;
  let calls = 0;
  const runner: AuditRunner<PersonaConfig, null, { invalid: number }> = {
    name: PERSONA_EXPERIMENT,
    limits: (c) => c.limits,
    prepare: async () => null,
    plan: () => planSpecs(plan),
    manifestOptions: () => ({}),
    stages: () => plan.stages.map((stage) => ({ name: stage.stage, expected: stage.items.length })),
    async execute(context) {
      let invalid = 0;
      for (const stage of plan.stages) {
        if (context.stopped) break;
        const judged = await context.parsedStage(stage.items, config.judgeRetries, stage.stage);
        calls += judged.stages.reduce((n, s) => n + s.calls, 0);
        invalid += judged.outcomes.filter((o) => o?.status === 'invalid').length;
      }
      return { invalid };
    },
  };
  const run = await runAudit(runner, config, db, { runtime, input: null, attachTo: prepared.runId });
  return {
    runId: run.runId,
    resumed: run.resumed,
    interrupted: run.interrupted,
    stopReason: run.stopReason,
    spendUsd: spendOrNull(run.spendUsd, run.unpricedCells),
    pricedSpendUsd: run.spendUsd,
    unpricedCells: run.unpricedCells,
    answers: plan.answers,
    judges: plan.stages.map((stage) => stage.judge),
    judgeCells: plan.stages.reduce((n, stage) => n + stage.items.length, 0),
    invalidJudgements: run.result.invalid,
    calls,
    stages: run.stages ?? [],
  };
}
