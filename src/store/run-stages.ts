import type Database from 'better-sqlite3';

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
  db.exec(`
CREATE TABLE IF NOT EXISTS run_stages (
  run_id     TEXT NOT NULL REFERENCES runs (id),
  stage      TEXT NOT NULL,
  ordinal    INTEGER NOT NULL,
  expected   INTEGER,
  registered INTEGER NOT NULL DEFAULT 0,
  settled    INTEGER NOT NULL DEFAULT 0,
  updated_at TEXT NOT NULL,
  PRIMARY KEY (run_id, stage)
);
`);
}

function hasLedger(db: Database.Database): boolean {
  return db.prepare("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'run_stages'").get() !== undefined;
}

/**
 * Records the stages a run will go through. A stage already in the ledger keeps its
 * counts; one that has not started takes the declared count (a resumed run re-plans).
 */
export function declareStages(db: Database.Database, runId: string, stages: readonly StageDeclaration[]): void {
  const now = new Date().toISOString();
  const insert = db.prepare(
    `INSERT INTO run_stages (run_id, stage, ordinal, expected, registered, settled, updated_at) VALUES (?, ?, ?, ?, 0, 0, ?)
     ON CONFLICT (run_id, stage) DO UPDATE SET expected = excluded.expected, updated_at = excluded.updated_at
     WHERE run_stages.registered = 0 AND run_stages.settled = 0`,
  );
  db.transaction(() => {
    stages.forEach((s, i) => {
      insert.run(runId, s.name, i, s.expected, now);
    });
  })();
}

/** Writes a stage's counts (a stage never declared is appended after the others). */
export function recordStage(db: Database.Database, runId: string, stage: string, counts: { expected: number; registered: number; settled: number }): void {
  const now = new Date().toISOString();
  db.prepare(
    `INSERT INTO run_stages (run_id, stage, ordinal, expected, registered, settled, updated_at)
     VALUES (?, ?, (SELECT coalesce(max(ordinal) + 1, 0) FROM run_stages WHERE run_id = ?), ?, ?, ?, ?)
     ON CONFLICT (run_id, stage) DO UPDATE SET expected = excluded.expected, registered = excluded.registered,
       settled = excluded.settled, updated_at = excluded.updated_at`,
  ).run(runId, stage, runId, counts.expected, counts.registered, counts.settled, now);
}

/** A run's stages in order; empty for runs written before the ledger existed (and for a store read without migrating). */
export function stagesOfRun(db: Database.Database, runId: string): StageProgress[] {
  if (!hasLedger(db)) return [];
  const rows = db
    .prepare('SELECT stage, ordinal, expected, registered, settled, updated_at FROM run_stages WHERE run_id = ? ORDER BY ordinal, stage')
    .all(runId) as Array<{ stage: string; ordinal: number; expected: number | null; registered: number; settled: number; updated_at: string }>;
  return rows.map((r) => ({ stage: r.stage, ordinal: r.ordinal, expected: r.expected, registered: r.registered, settled: r.settled, updatedAt: r.updated_at }));
}

/** True when the stage has all its cells registered and settled. */
export function stageComplete(stage: Pick<StageProgress, 'expected' | 'registered' | 'settled'>): boolean {
  return stage.expected !== null && stage.registered >= stage.expected && stage.settled >= stage.expected;
}

/** True when some declared stage of the run is not complete (the run cannot be `done`). */
export function hasIncompleteStage(db: Database.Database, runId: string): boolean {
  return stagesOfRun(db, runId).some((s) => !stageComplete(s));
}
