import { ConfigError } from '../core/errors.js';
import { MEMORY_EXPERIMENT } from '../memory-drift/run.js';
import { memoryReport } from '../memory-drift/observations.js';
import { PERSONA_EXPERIMENT, personaReport } from '../persona-drift/run.js';
import { accountRun } from '../report/report.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { type GateConfig, gateConfigSchema } from './config.js';
import type { GateRunInput } from './evaluate.js';

/** Reads the runs of a store as gate inputs (analysing each), and what their configs say about the gate. */

/** The model references a run's config names (targets, judges, labeler). */
export function modelsOfRun(config: unknown): string[] {
  if (typeof config !== 'object' || config === null) return [];
  const c = config as Record<string, unknown>;
  const refs: string[] = [];
  for (const key of ['targets', 'judges']) {
    const list = c[key];
    if (Array.isArray(list)) refs.push(...list.filter((x): x is string => typeof x === 'string'));
  }
  if (typeof c.labeler === 'string') refs.push(c.labeler);
  return refs;
}

/** True when any model of the run is a simulation (`sim:`): its results measure nothing real. */
export function isSimulatedRun(run: Pick<RunInfo, 'manifest'>): boolean {
  return modelsOfRun(run.manifest.config).some((ref) => ref.trim().toLowerCase().startsWith('sim:'));
}

/** The `gate:` section recorded with a run's config, if any (invalid sections are an error naming the run). */
export function gateOfRun(run: Pick<RunInfo, 'id' | 'manifest'>): GateConfig | undefined {
  const config = run.manifest.config as Record<string, unknown> | null;
  const section = config && typeof config === 'object' ? config.gate : undefined;
  if (section === undefined) return undefined;
  const parsed = gateConfigSchema.safeParse(section);
  if (!parsed.success) throw new ConfigError(`run ${run.id}: invalid gate section: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { field: 'gate' });
  return parsed.data;
}

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
