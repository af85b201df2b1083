import { accountedCounts, unfinishedCells } from '../report/document/build.js';
import { ConfigError } from '../core/errors.js';
import { findAudit, registeredAudits } from '../experiment/registry.js';
import { designsOf } from '../experiment/measurement.js';
import { analyzeAuditRun } from '../experiment/analyze-run.js';
import { refuseRunInProgress, runIncompleteness } from '../experiment/run-completeness.js';
import { accountRun } from '../report/report.js';
import type { RunHead, RunInfo, RunStore } from '../store/run-store.js';
import type { GateRunInput } from './evaluate.js';
import { isSimulatedRun } from './run-info.js';
import { mapSequential } from '../core/map-sequential.js';

export { gateOfRun, isSimulatedRun, modelsOfRun } from './run-info.js';

/**
 * Reads the runs of a store as gate inputs: each run analysed by the registered
 * audit of its experiment, whose `gate` member makes its checks.
 */

/** The names of the registered audits that can be gated. */
function gatedAudits(): string[] {
  return registeredAudits()
    .filter((a) => a.gate !== undefined)
    .map((a) => a.name);
}

/** The runs named, else the latest measurement of each design of a gateable audit (earlier measurements are history: `echolens history`). */
export async function gatedRuns(store: RunStore, runIds?: readonly string[]): Promise<RunInfo[]> {
  if (runIds && runIds.length > 0) return mapSequential(runIds, (id) => store.requireRun(id));
  const names = gatedAudits();
  const all = (await store.listRunHeads()).filter((r) => names.includes(r.experiment));
  const latest = new Set([...designsOf(all).values()].map((runs) => (runs.at(-1) as RunHead).id));
  const runs = all.filter((r) => latest.has(r.id));
  if (runs.length === 0) throw new ConfigError(`the store holds no ${names.join(', ')} run to gate`, { field: 'run' });
  // Each gated run's counts from the store (the gate's read-once view takes them from the cells it reads).
  return mapSequential(runs, (r) => store.requireRun(r.id));
}

export async function gateInput(store: RunStore, run: RunInfo, options: { B?: number } = {}): Promise<GateRunInput> {
  const account = await accountRun(store, run.id);
  // The run's cells as the result document counts them (the same figures as `runs list` and the viewer),
  // from the cells the accounting read rather than a second count by the store.
  const counts = accountedCounts(account);
  const unfinished = unfinishedCells(counts);
  const audit = findAudit(run.experiment);
  // A run that has not finished every stage is failed as it stands, never analysed (its analysis would read as clean).
  // A run another process is still running is neither passed nor failed: the gate says so (exit 4).
  await refuseRunInProgress(store, run);
  const incomplete = await runIncompleteness(store, run);
  const base = { runId: run.id, experiment: run.experiment, simulated: isSimulatedRun(run) };
  const cells = { total: counts.cells, unfinished };
  if (incomplete !== null) return { ...base, cells, incomplete };
  const report = audit?.gate ? (await analyzeAuditRun(audit, store, run, options.B ? { B: options.B } : {})).report : undefined;
  return {
    ...base,
    ...(report === undefined ? {} : { report }),
    cells,
    ...(account.notComputable === null ? {} : { notComputable: account.notComputable }),
  };
}
