import type { Audit, AuditRunResult } from '../experiment/audit.js';
import { suggestedBudget } from '../experiment/preflight.js';
import { auditExitCode, runAudit } from '../experiment/run-audit.js';
import type { StageRuntime } from '../experiment/runtime.js';
import { stopAdvice } from './stop-advice.js';

/** The flags every `<audit> run` command shares. */
export interface AuditRunFlags {
  db: string;
  dryRun?: boolean;
  concurrency?: number;
  maxCost?: number;
  /** `--prices` (the one name); `priceFile` is the old `--price-file`, kept as an alias. */
  prices?: string;
  priceFile?: string;
  /** `--batch`: submit OpenAI / Anthropic cells as provider batch jobs (half price, hours not seconds). */
  batch?: boolean;
  /** `--poll-interval <s>`: seconds between polls of open batch jobs. */
  pollInterval?: number;
}

/**
 * The body of every `<audit> run` command: the audit's preflight first (every problem listed
 * at once, exit 2, nothing recorded); a dry run then prints the plan and the estimate;
 * otherwise the run goes through runAudit, its result is printed in one line, and a stopped
 * run says why and what to do, with exit code 3. Returns the finished run, or null when
 * nothing more should happen (dry run, or stopped early).
 */
export async function runAuditCommand<C, I, K, R, X>(audit: Audit<C, I, K, R, X>, config: C, flags: AuditRunFlags): Promise<AuditRunResult<X> | null> {
  const priceFile = flags.prices ?? flags.priceFile;
  const runtime: StageRuntime = {
    ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
    ...(flags.maxCost ? { maxCostUsd: flags.maxCost } : {}),
    ...(priceFile ? { priceFile } : {}),
    ...(flags.batch ? { batch: true } : {}),
    ...(flags.pollInterval !== undefined ? { pollIntervalMs: flags.pollInterval * 1000 } : {}),
  };
  const checked = audit.preflight ? await audit.preflight(config, runtime) : { input: await audit.prepare(config) };
  if (flags.dryRun) {
    process.stdout.write(`${audit.dryRun(config, checked.input, priceFile).lines.join('\n')}\n`);
    if (flags.batch) {
      process.stdout.write(
        '--batch: the "with --batch" figure above is the one that applies: openai: and anthropic: cells at half price, each prefix group\u2019s first cell writing the prompt cache in a first batch and the rest reading it in a second (Anthropic 1-hour cache); other providers run online\n',
      );
    }
    return null;
  }
  const run = await runAudit(audit, config, flags.db, { input: checked.input, ...(checked.specs ? { specs: checked.specs } : {}), runtime });
  process.stdout.write(`${audit.describeResult(run, flags.db)}\n`);
  if (run.interrupted) {
    const maxCost = runtime.maxCostUsd ?? audit.limits(config).maxCostUsd;
    const budget =
      checked.estimate && maxCost !== undefined && maxCost !== null ? { maxCostUsd: maxCost, suggestedUsd: suggestedBudget(checked.estimate) } : undefined;
    process.stdout.write(`${stopAdvice(run.stopReason, budget)}\n`);
    process.exitCode = auditExitCode(run);
    return null;
  }
  return run;
}
