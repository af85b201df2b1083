import { existsSync, statSync } from 'node:fs';
import { ConfigError, isEcholensError } from '../core/errors.js';
import { createAdapter } from '../models/create-adapter.js';
import { EXPECTED_COST_MARGIN, type PlanEstimate } from '../models/estimate.js';
import { parseModelRef } from '../models/ref.js';
import type { StageRuntime } from './runtime.js';

/**
 * Preflight: everything a run needs, checked before anything is recorded or
 * called. Every problem is collected (not just the first), so one attempt
 * shows the user all there is to fix. Both audits, their `--dry-run`, and any
 * other command that records a run call it.
 */

export interface PreflightModel {
  /** The model reference as written (`openai:gpt-4.1-mini`, `sim:persona`). */
  ref: string;
  /** Where it came from (config key or flag), e.g. `targets.0`. */
  field: string;
}

export interface PreflightFile {
  path: string;
  field: string;
  /** `dir` when the path must be a folder (default: a file). */
  kind?: 'file' | 'dir';
}

export interface PreflightInput {
  models: readonly PreflightModel[];
  files?: readonly PreflightFile[];
  /** The plan's estimate; checked against `maxCostUsd` when both are given. */
  estimate?: PlanEstimate;
  maxCostUsd?: number;
  /** Where API keys are read (default `process.env`). */
  env?: Record<string, string | undefined>;
  /** Skip the API-key check (an injected adapter factory supplies the models). */
  skipKeys?: boolean;
}

/**
 * A dry run prices a grid before anyone has keys: a missing API key is then a warning
 * (a real run still stops on it). Splits those problems from the rest.
 */
export function splitKeyProblems(problems: readonly PreflightProblem[]): { problems: PreflightProblem[]; keyWarnings: PreflightProblem[] } {
  return { problems: problems.filter((p) => p.code !== 'model_auth'), keyWarnings: problems.filter((p) => p.code === 'model_auth') };
}

export interface PreflightProblem {
  field: string;
  message: string;
  hint?: string;
  /** The error code behind the problem, when one was thrown (`model_auth` = a missing API key). */
  code?: string;
}

/** Thrown when preflight finds problems; lists them all. The CLI exits 2. */
export class PreflightError extends ConfigError {
  readonly problems: PreflightProblem[];

  constructor(problems: PreflightProblem[]) {
    const lines = problems.map((p) => `  - ${p.field}: ${p.message}${p.hint ? ` (${p.hint})` : ''}`);
    super(`preflight found ${problems.length} problem${problems.length === 1 ? '' : 's'}; nothing was called and no run was recorded:\n${lines.join('\n')}`);
    this.problems = problems;
  }
}

/** The problems preflight finds, in input order (models, files, budget); empty when the run can start. */
export function preflightProblems(input: PreflightInput): PreflightProblem[] {
  const problems: PreflightProblem[] = [];
  const env = input.env ?? process.env;
  const seen = new Set<string>();
  for (const { ref, field } of input.models) {
    if (seen.has(ref)) continue;
    seen.add(ref);
    try {
      // Building the adapter parses the reference, finds the provider or simulation profile
      // and reads the API key variable; it calls nothing.
      createAdapter(ref, { env });
      const parsed = parseModelRef(ref);
      if (parsed.provider === 'replay' && !existsSync(parsed.model)) {
        problems.push({ field, message: `${ref}: no such run store: ${parsed.model}` });
      }
    } catch (error) {
      if (!isEcholensError(error)) throw error;
      if (input.skipKeys && error.code === 'model_auth') continue;
      problems.push({ field, message: error.message, code: error.code, ...(error.hint ? { hint: error.hint } : {}) });
    }
  }
  for (const file of input.files ?? []) {
    const folder = file.kind === 'dir';
    const noun = folder ? 'folder' : 'file';
    const stat = existsSync(file.path) ? statSync(file.path) : undefined;
    if (!stat) problems.push({ field: file.field, message: `no such ${noun}: ${file.path}` });
    else if (!(folder ? stat.isDirectory() : stat.isFile())) problems.push({ field: file.field, message: `not a ${noun}: ${file.path}` });
  }
  if (input.estimate && input.maxCostUsd !== undefined) problems.push(...budgetProblems(input.estimate, input.maxCostUsd));
  return problems;
}

/** Throws PreflightError listing every problem, or returns. */
export function assertPreflight(input: PreflightInput): void {
  const problems = preflightProblems(input);
  if (problems.length > 0) throw new PreflightError(problems);
}

/** A budget the plan cannot fit: its expected cost exceeds it, or a model has no price to enforce it with. */
export function budgetProblems(estimate: PlanEstimate, maxCostUsd: number): PreflightProblem[] {
  const problems: PreflightProblem[] = [];
  if (estimate.unpricedModels.length > 0) {
    problems.push({
      field: 'max-cost',
      message: `no price is known for ${estimate.unpricedModels.join(', ')}, so --max-cost $${maxCostUsd} cannot be enforced`,
      hint: 'give their prices with --prices <file>, or drop --max-cost',
    });
  }
  const reserve = budgetReserve(estimate);
  if (reserve > maxCostUsd) {
    const cached =
      estimate.expected === undefined ? '' : `; with prompt caching about $${money(estimate.expected.dollars)}, and $${money(reserve)} with the margin`;
    problems.push({
      field: 'max-cost',
      message: `the grid is expected to cost $${money(estimate.dollars.low)} – $${money(estimate.dollars.high)}${cached}, over the budget --max-cost $${maxCostUsd}`,
      hint: `raise --max-cost to $${suggestedBudget(estimate)} or shrink the grid (fewer targets, samples or positions)`,
    });
  }
  return problems;
}

/**
 * What a budget must cover before a run starts (docs/decisions.md#cost-estimates-and-caching):
 * the expected figure with prompt caching times EXPECTED_COST_MARGIN, but never more than
 * the naive figure (every input token at full price, expected output).
 */
export function budgetReserve(estimate: PlanEstimate): number {
  if (estimate.expected === undefined) return estimate.dollars.low;
  return Math.min(estimate.dollars.low, estimate.expected.dollars * EXPECTED_COST_MARGIN);
}

/** The budget in force (flag or config) with one covering the whole estimate, when both are known (the stop advice names them). */
export function budgetInForce(estimate: PlanEstimate | undefined, maxCostUsd: number | null | undefined) {
  return estimate && maxCostUsd !== undefined && maxCostUsd !== null ? { maxCostUsd, suggestedUsd: suggestedBudget(estimate) } : undefined;
}

/** A budget that covers the estimate's upper bound, rounded up to a readable figure. */
export function suggestedBudget(estimate: PlanEstimate): string {
  const high = estimate.dollars.high;
  if (high <= 0) return '0.01';
  const step = high < 1 ? 0.01 : high < 10 ? 0.5 : high < 100 ? 5 : 50;
  const rounded = Math.ceil(high / step - 1e-9) * step;
  return String(Number(rounded.toFixed(2)));
}

function money(x: number): string {
  return x < 1 ? x.toFixed(4) : x.toFixed(2);
}

/** What an audit's preflight checks: its models, its files, how to read its inputs and price its grid. */
export interface AuditPreflightSteps<Input, Spec> {
  models: PreflightInput['models'];
  files: NonNullable<PreflightInput['files']>;
  /**
   * Keys are not checked when the caller builds its own adapters (tests); a dry run gets missing
   * API keys back as `keyWarnings` instead of stopping.
   */
  runtime: Pick<StageRuntime, 'adapterFor' | 'dryRun'>;
  /** Inputs the caller already has (then nothing is read). */
  given?: Input;
  /** Reads the inputs; a ConfigError becomes a problem of `fallbackField`. */
  read(): Promise<Input>;
  fallbackField: string;
  plan(input: Input): Spec[];
  /** The budget in force (none = no cost check). */
  maxCostUsd: number | null | undefined;
  estimate(input: Input, specs: Spec[]): PlanEstimate;
}

/**
 * The preflight every audit shares: check references, keys and files; read the inputs unless a
 * listed file is already missing; plan; when a budget is set, price the grid against it. Throws a
 * PreflightError with every problem at once; nothing is called or recorded.
 */
export async function runPreflight<Input, Spec>(
  steps: AuditPreflightSteps<Input, Spec>,
): Promise<{ input: Input; specs: Spec[]; models: string[]; estimate?: PlanEstimate; keyWarnings?: PreflightProblem[] }> {
  const found = preflightProblems({ models: steps.models, files: steps.files, ...(steps.runtime.adapterFor !== undefined ? { skipKeys: true } : {}) });
  const { problems, keyWarnings } = steps.runtime.dryRun ? splitKeyProblems(found) : { problems: found, keyWarnings: [] };
  let input = steps.given;
  if (input === undefined && !problems.some((p) => steps.files.some((f) => f.field === p.field))) {
    try {
      input = await steps.read();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push({ field: error.field ?? steps.fallbackField, message: error.message.replace(/^[^:]+: /u, '') });
    }
  }
  if (input === undefined) throw new PreflightError(problems);
  const specs = steps.plan(input);
  let estimate: PlanEstimate | undefined;
  if (steps.maxCostUsd !== undefined && steps.maxCostUsd !== null) {
    estimate = steps.estimate(input, specs);
    problems.push(...budgetProblems(estimate, steps.maxCostUsd));
  }
  if (problems.length > 0) throw new PreflightError(problems);
  const models = steps.models.map((model) => model.ref);
  return { input, specs, models, ...(estimate ? { estimate } : {}), ...(keyWarnings.length > 0 ? { keyWarnings } : {}) };
}
