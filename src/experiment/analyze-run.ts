import { ConfigError } from '../core/errors.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import type { AnalyzedRun, AnalyzeOptions, Audit } from './audit.js';

/**
 * Reading a finished run back: which run a report means and its audit's analysis of it. Kept apart
 * from run-audit.ts (the run lifecycle) so that reports, the gate and the viewer import no part of
 * the execution engine (issue #44).
 */

/** The run named (checked to be of this audit), else the latest run of the audit in the store. */
export async function auditRunId(store: RunStore, experiment: string, runId?: string): Promise<string> {
  if (runId) {
    const run = await store.requireRun(runId);
    if (run.experiment !== experiment) throw new ConfigError(`run ${runId} is a ${run.experiment} run, not a ${experiment} run`, { field: 'run' });
    return runId;
  }
  const latest = latestRun(await store.listRunHeads(), experiment);
  if (!latest) throw new ConfigError(`the store holds no ${experiment} run`, { field: 'run' });
  return latest.id;
}

/** The most recently started run of an experiment among these runs. */
export function latestRun<R extends Pick<RunInfo, 'experiment' | 'startedAt'>>(runs: readonly R[], experiment: string): R | undefined {
  return runs.filter((r) => r.experiment === experiment).sort((a, b) => b.startedAt.localeCompare(a.startedAt))[0];
}

/** Collects and analyses one run with its audit. */
export async function analyzeAuditRun<C, I, K, R, X>(
  audit: Audit<C, I, K, R, X>,
  store: RunStore,
  run: RunInfo,
  options: AnalyzeOptions = {},
): Promise<AnalyzedRun<K, R>> {
  const collected = await audit.collect(store, run);
  return { run, collected, report: audit.analyze(collected, run, options) };
}
