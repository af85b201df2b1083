import { spendText } from '../core/money.js';
import type { RunCellsResult } from '../store/runner-types.js';

/**
 * One stage of a run as the progress line showed it: the same label and the same cell counts,
 * so the summary printed at the end never disagrees with the progress the user watched.
 * `requests` can exceed `cells`: identical requests (e.g. judging two identical answers) share
 * one cell and one answer.
 */
export interface StageTally {
  label: string;
  /** Requests the stage was given (specs, duplicates included). */
  requests: number;
  /** Distinct cells among them: the progress line's total. */
  cells: number;
  /** Cells finished in any way (cached, answered, empty, failed): the progress line's count. */
  finished: number;
  /** Cells not finished; a re-run resumes them. */
  pending: number;
}

export function stageTally(label: string, result: RunCellsResult): StageTally {
  return { label, requests: result.planned, cells: result.total, finished: result.total - result.pending, pending: result.pending };
}

/** `judges (attempt 1): 20/20 cells (120 requests; identical ones share a cell)`. */
export function stageLine(stage: StageTally): string {
  const shared = stage.requests > stage.cells ? ` (${stage.requests} requests; identical ones share a cell)` : '';
  const pending = stage.pending > 0 ? `, ${stage.pending} pending` : '';
  return `${stage.label}: ${stage.finished}/${stage.cells} cells${shared}${pending}`;
}

const REASONS: Record<string, string> = {
  interrupted: 'stopped by Ctrl-C / SIGTERM',
  budget: 'stopped at the --max-cost budget',
  fatal: 'stopped after repeated errors',
};

/**
 * The summary of a run that stopped early: it says so first, then what each stage that started
 * has done against what it planned. Later stages are planned from earlier answers, so they are
 * named only as not started.
 */
export function interruptedSummary(
  runId: string,
  db: string,
  stopReason: string | null,
  stages: readonly StageTally[],
  spendUsd: number,
  unpricedCells = 0,
): string[] {
  const why = (stopReason !== null && REASONS[stopReason]) || 'stopped early';
  return [
    `run ${runId} in ${db} is INCOMPLETE (${why}); finished so far, per stage:`,
    ...stages.map((s) => `  ${stageLine(s)}`),
    '  later stages: not started (they are planned from the answers above)',
    `spend so far ${spendText(spendUsd, unpricedCells)}`,
  ];
}
