import { ConfigError } from '../core/errors.js';
import { MEMORY_EXPERIMENT } from '../memory-drift/run.js';
import { memoryReport } from '../memory-drift/observations.js';
import { PERSONA_EXPERIMENT, personaReport } from '../persona-drift/run.js';
import { accountRun } from '../report/report.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import type { GateRunInput } from './evaluate.js';
import { isSimulatedRun } from './run-info.js';

export { gateOfRun, isSimulatedRun, modelsOfRun } from './run-info.js';

/** Reads the runs of a store as gate inputs (analysing each), and what their configs say about the gate. */

export function gatedRuns(store: RunStore, runIds?: readonly string[]): RunInfo[] {
  if (runIds && runIds.length > 0) return runIds.map((id) => store.requireRun(id));
  const runs = store.listRuns().filter((r) => r.experiment === PERSONA_EXPERIMENT || r.experiment === MEMORY_EXPERIMENT);
  if (runs.length === 0) throw new ConfigError('the store holds no persona or memory run to gate', { field: 'run' });
  return runs;
}

export function gateInput(store: RunStore, run: RunInfo, options: { B?: number } = {}): GateRunInput {
  const account = accountRun(store, run.id);
  const unfinished = (account.byStatus.failed ?? 0) + (account.byStatus.pending ?? 0);
  const analysis = options.B ? { B: options.B } : {};
  return {
    runId: run.id,
    experiment: run.experiment,
    simulated: isSimulatedRun(run),
    ...(run.experiment === PERSONA_EXPERIMENT ? { persona: personaReport(store, run.id, analysis) } : {}),
    ...(run.experiment === MEMORY_EXPERIMENT ? { memory: memoryReport(store, run.id, analysis) } : {}),
    cells: { total: account.cells, unfinished },
  };
}
