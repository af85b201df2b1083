import type Database from 'better-sqlite3';
import { InputError } from '../core/errors.js';
import { migrateBatchJobs } from './batch-jobs.js';
import { migrateRunStages } from './run-stages.js';
import { createTable } from './sql/tables.js';

/** Marks a SQLite file as an echolens store (`PRAGMA application_id`, "ECLS"). */
export const APPLICATION_ID = 0x45434c53;
export const SCHEMA_VERSION = 5;
/** The oldest schema a read-only handle reads without migrating (later versions only add tables/columns it can do without). */
export const READABLE_WITHOUT_MIGRATION = 2;

const SCHEMA_V1 = [
  createTable('sqlite', 'meta'),
  createTable('sqlite', 'runs'),
  createTable('sqlite', 'cells'),
  'CREATE INDEX cells_content_key ON cells (content_key);',
  createTable('sqlite', 'run_cells'),
  'CREATE INDEX run_cells_order ON run_cells (run_id, ordinal);',
].join('\n');

/**
 * Upgrades from version i to i + 1 live at index i - 1. A store written by a
 * newer echolens is refused rather than guessed at.
 */
const MIGRATIONS: ReadonlyArray<(db: Database.Database) => void> = [
  // 1 → 2: tool calls a model emitted (JSON array), for requests that offer tools.
  (db) => db.exec('ALTER TABLE cells ADD COLUMN tool_calls TEXT'),
  // 2 → 3: long request parts stored once, content-addressed (blobs.ts); cells refer to them.
  // Cells written before keep their full request JSON, which reads unchanged.
  (db) => db.exec(createTable('sqlite', 'blobs')),
  // 3 → 4: provider batch jobs (--batch) and the cells each holds (src/store/batch-jobs.ts).
  migrateBatchJobs,
  // 4 → 5: per-stage progress of each run (run-stages.ts): a run is done only when every stage is.
  migrateRunStages,
];

/** Creates the schema in an empty file, migrates an older one, refuses a foreign or newer one. */
export function ensureSchema(db: Database.Database, file: string): void {
  const applicationId = db.pragma('application_id', { simple: true }) as number;
  const tableCount = (db.prepare("SELECT count(*) AS n FROM sqlite_master WHERE type = 'table'").get() as { n: number }).n;

  if (tableCount === 0 && applicationId === 0) {
    db.transaction(() => {
      db.exec(SCHEMA_V1);
      for (const migrate of MIGRATIONS) migrate(db);
      db.prepare('INSERT INTO meta (name, value) VALUES (?, ?)').run('schema_version', String(SCHEMA_VERSION));
      db.pragma(`application_id = ${APPLICATION_ID}`);
    })();
    return;
  }
  if (applicationId !== APPLICATION_ID) {
    throw new InputError('not an echolens run store (foreign SQLite database)', { file });
  }
  const version = readSchemaVersion(db, file);
  if (version > SCHEMA_VERSION) {
    throw new InputError(
      `store schema version ${version} is newer than this echolens understands (${SCHEMA_VERSION})`,
      { file },
      { hint: 'upgrade echolens to read this store' },
    );
  }
  for (let from = version; from < SCHEMA_VERSION; from += 1) {
    const migrate = MIGRATIONS[from - 1];
    if (!migrate) throw new InputError(`no migration from store schema version ${from}`, { file });
    db.transaction(() => {
      migrate(db);
      db.prepare('UPDATE meta SET value = ? WHERE name = ?').run(String(from + 1), 'schema_version');
    })();
  }
}

export function readSchemaVersion(db: Database.Database, file: string): number {
  let row: { value: string } | undefined;
  try {
    row = db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").get() as { value: string } | undefined;
  } catch (error) {
    throw new InputError('store has no meta table (damaged or not an echolens store)', { file }, { cause: error });
  }
  const version = row === undefined ? Number.NaN : Number(row.value);
  if (!Number.isInteger(version) || version < 1) {
    throw new InputError(`store schema version is missing or invalid (${row?.value ?? 'none'})`, { file, field: 'schema_version' });
  }
  return version;
}
