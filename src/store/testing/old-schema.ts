import Database from 'better-sqlite3';
import { RunStore } from '../run-store.js';
import { TEST_MANIFEST } from './fakes.js';

/**
 * Turns a SQLite store file back into an older schema version, as an older echolens left it:
 * `undo` removes what the later migrations added, and the recorded version becomes `version`.
 */
export function rewindSchema(file: string, version: number, undo: string, edit?: (db: Database.Database) => void): void {
  const db = new Database(file);
  edit?.(db);
  db.exec(undo);
  db.prepare("UPDATE meta SET value = ? WHERE name = 'schema_version'").run(String(version));
  db.close();
}

/** A store file at an older schema version holding one finished run; returns the run's id. */
export async function oldStoreWithDoneRun(file: string, version: number, undo: string): Promise<string> {
  const store = RunStore.open(file);
  const id = await store.createRun(TEST_MANIFEST);
  await store.setRunStatus(id, 'done');
  await store.close();
  rewindSchema(file, version, undo);
  return id;
}
