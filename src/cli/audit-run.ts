import type { Audit, AuditPreflight, AuditRunResult } from '../experiment/audit.js';
import type { PreflightProblem } from '../experiment/preflight.js';
import { interruptedSummary, stageLine } from '../experiment/stage-tally.js';
import { budgetInForce } from '../experiment/preflight.js';
import { auditExitCode, runAudit } from '../experiment/run-audit.js';
import { decideMeasurement } from '../experiment/measurement.js';
import { cacheSettingsOf } from '../experiment/limits-schema.js';
import { measurementFlags, runtimeOfFlags } from './run-options.js';
import { stopAdvice } from './stop-advice.js';
import { openaiRetentionByModel } from '../models/cache-retention.js';
import { batchCacheRule, openaiRetentionLine } from '../store/cache-schedule.js';

/** The flags every `<audit> run` command shares. */
export interface AuditRunFlags {
  db: string;
  dryRun?: boolean;
  concurrency?: number;
  maxCost?: number;
  /** `--prices`: a price table overriding the built-in one. */
  prices?: string;
  /** `--batch`: submit OpenAI / Anthropic cells as provider batch jobs (half price, hours not seconds). */
  batch?: boolean;
  /** `--poll-interval <s>`: seconds between polls of open batch jobs. */
  pollInterval?: number;
  /** `--fresh`: a new measurement of the design (docs/over-time.md). */
  fresh?: boolean;
  /** `--max-age <duration>`: a new measurement when the latest is older. */
  maxAge?: string;
  /** `--tag <name>`: the measurement's name. */
  tag?: string;
}

/**
 * The body of every `<audit> run` command: the audit's preflight first (every problem listed
 * at once, exit 2, nothing recorded); a dry run then prints the plan and the estimate;
 * otherwise the run goes through runAudit, its result is printed in one line, and a stopped
 * run says why and what to do, with exit code 3. Returns the finished run, or null when
 * nothing more should happen (dry run, or stopped early).
 */
export async function runAuditCommand<C, I, K, R, X>(audit: Audit<C, I, K, R, X>, config: C, flags: AuditRunFlags): Promise<AuditRunResult<X> | null> {
  const priceFile = flags.prices;
  const runtime = runtimeOfFlags(flags);
  // Parsed before anything runs: a bad --max-age or --tag is exit 2 with nothing recorded.
  const measurement = measurementFlags(flags);
  if (measurement.tag !== undefined) decideMeasurement('check', [], { tag: measurement.tag });
  const checked: AuditPreflight<I> = audit.preflight
    ? await audit.preflight(config, flags.dryRun ? { ...runtime, dryRun: true } : runtime)
    : { input: await audit.prepare(config) };
  if (flags.dryRun) {
    process.stdout.write(`${audit.dryRun(config, checked.input, priceFile).lines.join('\n')}\n`);
    for (const line of keyWarningLines(checked.keyWarnings ?? [])) process.stderr.write(`${line}\n`);
    if (measurement.fresh || (config as { fresh?: unknown }).fresh === true) {
      process.stdout.write('--fresh: a new measurement calls every cell again, none answered from the store: the full estimate above is its price\n');
    }
    const cache = cacheSettingsOf(audit.limits(config));
    if (flags.batch) {
      const anthropic = (cache.cacheTtl ?? '1h') === '1h' ? '1-hour' : '5-minute';
      process.stdout.write(
        `--batch: the "with --batch" figure above is the one that applies: openai: and anthropic: cells at half price, each prefix group\u2019s first cell writing the prompt cache in a first batch and the rest reading it in a second (Anthropic ${anthropic} cache); other providers run online\n` +
          `${openaiRetentionLine(cache, true)}\n` +
          `--batch and the prompt cache: ${batchCacheRule(cache)}\n`,
      );
    } else if (cache.openaiCacheRetention !== undefined) {
      process.stdout.write(`${openaiRetentionLine(cache, false)}\n`);
    }
    const perModel = openaiRetentionByModel(checked.models ?? [], cache.openaiCacheRetention, flags.batch === true);
    if (perModel.length > 0 && (flags.batch || cache.openaiCacheRetention !== undefined)) {
      const what = (r: (typeof perModel)[number]) =>
        r.retention === undefined ? 'none sent (planned as 5 min)' : `${r.retention}${cache.openaiCacheRetention === undefined ? ' on its prefix groups' : ''}`;
      process.stdout.write(`OpenAI prompt_cache_retention by model: ${perModel.map((r) => `${r.ref} ${what(r)}`).join('; ')}\n`);
    }
    return null;
  }
  const run = await runAudit(audit, config, flags.db, { input: checked.input, ...(checked.specs ? { specs: checked.specs } : {}), runtime, measurement });
  if (run.interrupted) {
    // The audit's own counts describe a finished run; a stopped one says so and shows each stage's progress.
    process.stdout.write(`${interruptedSummary(run.runId, flags.db, run.stopReason, run.stages ?? [], run.spendUsd, run.unpricedCells).join('\n')}\n`);
  } else {
    process.stdout.write(`${audit.describeResult(run, flags.db)}\n`);
    if (run.stages && run.stages.length > 0) process.stdout.write(`stages: ${run.stages.map(stageLine).join('; ')}\n`);
  }
  if (run.interrupted) {
    const budget = budgetInForce(checked.estimate, runtime.maxCostUsd ?? audit.limits(config).maxCostUsd);
    process.stdout.write(`${stopAdvice(run.stopReason, budget)}\n`);
    process.exitCode = auditExitCode(run);
    return null;
  }
  return run;
}

/** A dry run's missing keys: warnings, each saying a real run stops there. */
export function keyWarningLines(warnings: readonly PreflightProblem[]): string[] {
  if (warnings.length === 0) return [];
  return [
    `warning: ${warnings.length} API key${warnings.length === 1 ? ' is' : 's are'} missing; the estimate above stands, but a real run stops at preflight until ${warnings.length === 1 ? 'it is' : 'they are'} set:`,
    ...warnings.map((w) => `  - ${w.field}: ${w.message}${w.hint ? ` (${w.hint})` : ''}`),
  ];
}
