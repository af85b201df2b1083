import type Database from 'better-sqlite3';
import { createTable } from './sql/tables.js';

/**
 * Per-stage progress of a run (generation, labeling, judges, …). A run is
 * `done` only when every stage it declared has all its cells registered and
 * settled: the runner ends each stage with status `done`, and without this
 * ledger a run killed between two stages (or whose later stage could not be
 * registered) read as finished.
 *
 * `expected` is the stage's cell count: the plan's when the run starts (null
 * when it depends on earlier stages' answers), the exact count once the stage
 * starts. `registered` = its cells linked to the run, `settled` = those that
 * reached a final state (done, empty, failed, or an output judged invalid
 * after its re-asks). Both are written at the stage's boundaries only.
 */

export interface StageProgress {
  stage: string;
  /** Order of the stage in the run (declaration order, then first use). */
  ordinal: number;
  expected: number | null;
  registered: number;
  settled: number;
  updatedAt: string;
}

/** A stage an audit declares before it runs, with its planned cell count (null = not known yet). */
export interface StageDeclaration {
  name: string;
  expected: number | null;
}

/** The migration that adds the stage ledger (schema 4 → 5; safe on a file that already has it). */
export function migrateRunStages(db: Database.Database): void {
  db.exec(createTable('sqlite', 'run_stages'));
}

/** True when the stage has all its cells registered and settled. */
export function stageComplete(stage: Pick<StageProgress, 'expected' | 'registered' | 'settled'>): boolean {
  return stage.expected !== null && stage.registered >= stage.expected && stage.settled >= stage.expected;
}
