import { EcholensError } from '../core/errors.js';
import { type StageProgress, stageComplete } from '../store/run-stages.js';
import type { RunInfo, RunStore } from '../store/run-store.js';

/**
 * Whether a run is finished enough to analyse: status `done` and every stage it
 * declared complete (all cells registered and settled). Reports and the gate
 * refuse anything less, since an analysis of a run killed between stages reads
 * as a clean result ("0 of 960 observations scored", PASS).
 */

/** Why a stage is not complete, e.g. `stage labeling has 0 of 960 cells`; null when it is. */
export function stageShortfall(stage: StageProgress): string | null {
  if (stageComplete(stage)) return null;
  if (stage.expected === null) return `stage ${stage.stage} has not started`;
  if (stage.registered < stage.expected) return `stage ${stage.stage} has ${stage.registered} of ${stage.expected} cells`;
  return `stage ${stage.stage} has ${stage.settled} of ${stage.expected} cells settled`;
}

/** The one-line refusal for an incomplete run, or null when the run is complete. Pure. */
export function incompleteRunMessage(run: Pick<RunInfo, 'status'>, stages: readonly StageProgress[]): string | null {
  const shortfall = stages.map(stageShortfall).find((s) => s !== null);
  if (shortfall) return `incomplete run: ${shortfall} — re-run the same command to finish`;
  if (run.status !== 'done') return `incomplete run: its status is ${run.status} — re-run the same command to finish`;
  return null;
}

/** The store's view of {@link incompleteRunMessage}. */
export function runIncompleteness(store: RunStore, run: RunInfo): string | null {
  return incompleteRunMessage(run, store.stages(run.id));
}

/** A report asked of a run that has not finished every stage. */
export class IncompleteRunError extends EcholensError {
  readonly runId: string;

  constructor(runId: string, message: string) {
    super('incomplete_run', `run ${runId}: ${message}`);
    this.runId = runId;
  }
}

/** Throws {@link IncompleteRunError} unless the run is complete. */
export function requireCompleteRun(store: RunStore, runId: string): void {
  const run = store.requireRun(runId);
  const message = runIncompleteness(store, run);
  if (message !== null) throw new IncompleteRunError(runId, message);
}

/** Per-stage progress for listings: `generation 960/960 · labeling 0/960`. */
export function stageProgressText(stages: readonly StageProgress[]): string {
  return stages
    .map((s) => {
      const of = s.expected === null ? '?' : String(s.expected);
      const count = s.registered < (s.expected ?? 0) || s.expected === null ? `${s.registered}/${of} registered` : `${s.settled}/${of}`;
      return `${s.stage} ${count}`;
    })
    .join(' · ');
}
