import { ConfigError } from '../core/errors.js';
import type { RunInfo } from '../store/run-store.js';
import type { GateConfig } from './config.js';
import { registeredGateSchema } from './registered.js';

/** What a run's manifest says about the gate: its models (simulated or not) and its `gate:` section. */

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
  // The continuation audit's optional judge: `judge: { model }`.
  const judge = c.judge as { model?: unknown } | undefined;
  if (typeof judge === 'object' && judge !== null && typeof judge.model === 'string') refs.push(judge.model);
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
  const parsed = registeredGateSchema().safeParse(section);
  if (!parsed.success) throw new ConfigError(`run ${run.id}: invalid gate section: ${parsed.error.issues[0]?.message ?? 'invalid'}`, { field: 'gate' });
  return parsed.data;
}
