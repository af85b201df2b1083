import type { RunInfo } from '../store/run-store.js';

/**
 * A run's display name: the config's `name:` when it sets one (not the default
 * `<audit>-audit`), else experiment · first target ·
 * start date. The run id (a hash of experiment and config) stays the run's address and is shown
 * next to the name.
 */
export function runName(run: Pick<RunInfo, 'experiment' | 'startedAt' | 'manifest'>): string {
  const config = (run.manifest.config ?? {}) as Record<string, unknown>;
  const name = typeof config.name === 'string' ? config.name.trim() : '';
  // The configs' default name (`persona-audit`, …) names no run in particular.
  if (name !== '' && name !== `${run.experiment}-audit`) return name;
  const targets = Array.isArray(config.targets) ? config.targets : [config.targets ?? config.target];
  const first = targets.find((t): t is string => typeof t === 'string');
  const more = targets.length > 1 ? ` +${targets.length - 1}` : '';
  return [run.experiment, first ? `${first}${more}` : undefined, run.startedAt.slice(0, 10)].filter(Boolean).join(' · ');
}
