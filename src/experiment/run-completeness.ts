import { EcholensError } from '../core/errors.js';
import { type StageProgress, stageComplete } from '../store/run-stages.js';
import type { RunInfo, RunStore } from '../store/run-store.js';
import { storeWriter } from '../store/store-lock.js';

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
export async function runIncompleteness(store: RunStore, run: RunInfo): Promise<string | null> {
  return incompleteRunMessage(run, await store.stages(run.id));
}

/**
 * "running in process N: 55 of 80 cells; …" when another live process holds the store's write lock
 * and the run is not complete (its own command is still working on it), else null. Pure.
 */
export function runInProgressMessage(
  run: Pick<RunInfo, 'id' | 'status'>,
  stages: readonly StageProgress[],
  writer: { pid: number; host: string } | null,
  storeFile: string,
): string | null {
  if (writer === null || incompleteRunMessage(run, stages) === null) return null;
  const settled = stages.reduce((n, s) => n + Math.min(s.settled, s.expected ?? s.settled), 0);
  const expected = stages.reduce((n, s) => n + (s.expected ?? 0), 0);
  const cells = expected > 0 ? `: ${settled} of ${expected} cells` : '';
  return `run ${run.id} is running in process ${writer.pid} on ${writer.host}${cells}; run \`echolens runs list ${storeFile}\` to follow, and report or gate it when it has finished`;
}

/** A report or gate asked of a run another process is still running (exit code 4). */
export class RunInProgressError extends EcholensError {
  constructor(message: string) {
    super('run_in_progress', message);
  }
}

/** Throws {@link RunInProgressError} when another live process is running this (incomplete) run. */
export async function refuseRunInProgress(store: RunStore, run: RunInfo): Promise<void> {
  const message = runInProgressMessage(run, await store.stages(run.id), storeWriter(store.file), store.file);
  if (message !== null) throw new RunInProgressError(message);
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
export async function requireCompleteRun(store: RunStore, runId: string): Promise<void> {
  const run = await store.requireRun(runId);
  await refuseRunInProgress(store, run);
  const message = await runIncompleteness(store, run);
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
