import type { AuditPreflight } from '../experiment/audit.js';
import { runPreflight } from '../experiment/preflight.js';
import type { StageRuntime } from '../experiment/runtime.js';
import { estimateCells } from '../models/estimate.js';
import { loadPriceTable } from '../models/prices.js';
import type { CellSpec } from '../store/types.js';
import type { ContinuationConfig } from './config.js';

/**
 * The continuation audit's preflight, as the other audits have one: every model reference and
 * key, the transcripts, then the cutpoint plan and, under a budget, its price — all problems at
 * once, before a run is recorded. A dry run lets missing keys through as warnings.
 * `prepare` reads the sessions and plans (the runner's own, passed in to keep this file free of
 * an import cycle with run.ts).
 */
export async function preflightContinuation<Input extends { plan: { specs: CellSpec[] } }>(
  config: ContinuationConfig,
  runtime: StageRuntime,
  prepare: (config: ContinuationConfig) => Promise<Input>,
): Promise<AuditPreflight<Input>> {
  return runPreflight({
    models: [...config.targets.map((ref, i) => ({ ref, field: `targets.${i}` })), ...(config.judge ? [{ ref: config.judge.model, field: 'judge.model' }] : [])],
    files: [
      { path: config.session, field: 'session' },
      ...(config.crossSession ? [{ path: config.crossSession, field: 'crossSession' }] : []),
      ...(config.crossSessions ?? []).map((path, i) => ({ path, field: `crossSessions.${i}` })),
    ],
    runtime,
    read: () => prepare(config),
    fallbackField: 'session',
    plan: (input) => input.plan.specs,
    maxCostUsd: runtime.maxCostUsd ?? config.limits.maxCostUsd,
    estimate: (_input, specs) => estimateCells(specs, loadPriceTable(runtime.priceFile ? { file: runtime.priceFile } : {})),
  });
}
