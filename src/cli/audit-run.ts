import type { Audit, AuditRunResult } from '../experiment/audit.js';
import { auditExitCode, runAudit } from '../experiment/run-audit.js';

/** The flags every `<audit> run` command shares. */
export interface AuditRunFlags {
  db: string;
  dryRun?: boolean;
  concurrency?: number;
  maxCost?: number;
  priceFile?: string;
}

/**
 * The body of every `<audit> run` command: a dry run prints the plan and the
 * estimate; otherwise the run goes through runAudit, its result is printed in
 * one line, and a stopped run sets exit code 3. Returns the finished run, or
 * null when nothing more should happen (dry run, or stopped early).
 */
export async function runAuditCommand<C, I, K, R, X>(audit: Audit<C, I, K, R, X>, config: C, flags: AuditRunFlags): Promise<AuditRunResult<X> | null> {
  const input = await audit.prepare(config);
  if (flags.dryRun) {
    process.stdout.write(`${audit.dryRun(config, input, flags.priceFile).lines.join('\n')}\n`);
    return null;
  }
  const run = await runAudit(audit, config, flags.db, {
    input,
    runtime: {
      ...(flags.concurrency ? { concurrency: flags.concurrency } : {}),
      ...(flags.maxCost ? { maxCostUsd: flags.maxCost } : {}),
      ...(flags.priceFile ? { priceFile: flags.priceFile } : {}),
    },
  });
  process.stdout.write(`${audit.describeResult(run, flags.db)}\n`);
  if (run.interrupted) {
    process.stdout.write('the run stopped early; run the same command again to resume\n');
    process.exitCode = auditExitCode(run);
    return null;
  }
  return run;
}
