import { InputError } from '../../core/errors.js';
import { createTable } from '../sql/tables.js';
import type { PgClient } from './pg-client.js';

/**
 * The PostgreSQL schema: the SQLite store's tables (schema.ts, same columns and
 * meanings: content-addressed cells and blobs, run links with labels, batch jobs)
 * plus what sharing needs: cell leases (`lease_owner`, `lease_until`, the run the
 * lease works for and the cost it reserved), each cell's prefix group (cache-aware
 * claiming), per-run settings workers read (`settings`: budget and rate limits) and
 * the spend so far, and shared rate buckets. Everything lives in the `echolens`
 * schema of the database; versions are counted separately from SQLite's (a Postgres
 * store starts at the SQLite store's version-4 content).
 *
 * Timestamps the runner writes stay ISO-8601 TEXT exactly as in SQLite, so both
 * backends return byte-identical rows; only leases use the server's clock
 * (`timestamptz`), so that machines with skewed clocks agree on expiry.
 */

export const PG_SCHEMA_VERSION = 2;

const SCHEMA_V1 = [
  createTable('postgres', 'meta'),
  createTable('postgres', 'runs', ['settings TEXT', 'spent_usd DOUBLE PRECISION NOT NULL DEFAULT 0']),
  createTable('postgres', 'cells', [
    'tool_calls TEXT',
    'prefix_group TEXT',
    'lease_owner TEXT',
    'lease_until TIMESTAMPTZ',
    'lease_run TEXT',
    'lease_reserved_usd DOUBLE PRECISION NOT NULL DEFAULT 0',
  ]),
  'CREATE INDEX cells_content_key ON cells (content_key);',
  "CREATE INDEX cells_pending ON cells (prefix_group, key) WHERE status = 'pending';",
  'CREATE INDEX cells_leased ON cells (lease_owner) WHERE lease_owner IS NOT NULL;',
  'CREATE INDEX cells_lease_run ON cells (lease_run) WHERE lease_run IS NOT NULL;',
  createTable('postgres', 'run_cells'),
  'CREATE INDEX run_cells_order ON run_cells (run_id, ordinal);',
  'CREATE INDEX run_cells_key ON run_cells (key);',
  createTable('postgres', 'blobs'),
  createTable('postgres', 'batch_jobs'),
  // `position` keeps a job's keys in insertion order (SQLite has its rowid for that).
  createTable('postgres', 'batch_job_cells', ['position BIGSERIAL']),
  'CREATE INDEX batch_job_cells_key ON batch_job_cells (key);',
  createTable('postgres', 'run_stages'),
  `CREATE TABLE rate_buckets (
  name       TEXT PRIMARY KEY,
  level      DOUBLE PRECISION NOT NULL,
  updated_at TIMESTAMPTZ NOT NULL
);`,
].join('\n');

/** Upgrades from version i to i + 1 live at index i - 1. */
const MIGRATIONS: readonly string[] = [
  // 1 → 2: attempts counted before a call that no written outcome has settled yet (a killed
  // worker's call, a result that could not be stored); a claim fails a cell with too many.
  `ALTER TABLE cells ADD COLUMN open_attempts INTEGER NOT NULL DEFAULT 0;
   CREATE INDEX cells_open_attempts ON cells (key) WHERE status = 'pending' AND open_attempts > 0`,
];

/** An arbitrary constant: the advisory lock that serializes schema creation between processes. */
const SCHEMA_LOCK = 0x45434c53;

/** Creates the schema in an empty database, migrates an older one, refuses a newer one. */
export async function ensurePgSchema(client: PgClient, location: string, readonly: boolean): Promise<void> {
  const exists = async () =>
    (await client.query("SELECT 1 FROM information_schema.tables WHERE table_schema = 'echolens' AND table_name = 'meta'")).rowCount > 0;
  if (!(await exists())) {
    if (readonly) throw new InputError('not an echolens run store (the database has no echolens schema)', { file: location });
    await client.transaction(async () => {
      await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
      if (await exists()) return; // another process created it while this one waited
      await client.query('CREATE SCHEMA IF NOT EXISTS echolens');
      await client.query(SCHEMA_V1);
      for (const migration of MIGRATIONS) await client.query(migration);
      await client.query("INSERT INTO meta (name, value) VALUES ('schema_version', $1), ('application', 'echolens')", [String(PG_SCHEMA_VERSION)]);
    });
    return;
  }
  const version = await readPgSchemaVersion(client, location);
  if (version > PG_SCHEMA_VERSION) {
    throw new InputError(
      `store schema version ${version} is newer than this echolens understands (${PG_SCHEMA_VERSION})`,
      { file: location },
      { hint: 'upgrade echolens to read this store' },
    );
  }
  if (version === PG_SCHEMA_VERSION) return;
  if (readonly) throw new InputError('store needs a migration; open it once without --readonly', { file: location });
  await client.transaction(async () => {
    await client.query('SELECT pg_advisory_xact_lock($1)', [SCHEMA_LOCK]);
    for (let from = await readPgSchemaVersion(client, location); from < PG_SCHEMA_VERSION; from += 1) {
      const migration = MIGRATIONS[from - 1];
      if (migration === undefined) throw new InputError(`no migration from store schema version ${from}`, { file: location });
      await client.query(migration);
      await client.query("UPDATE meta SET value = $1 WHERE name = 'schema_version'", [String(from + 1)]);
    }
  });
}

async function readPgSchemaVersion(client: PgClient, location: string): Promise<number> {
  const row = (await client.query("SELECT value FROM meta WHERE name = 'schema_version'")).rows[0] as { value: string } | undefined;
  const version = row === undefined ? Number.NaN : Number(row.value);
  if (!Number.isInteger(version) || version < 1) {
    throw new InputError(`store schema version is missing or invalid (${row?.value ?? 'none'})`, { file: location, field: 'schema_version' });
  }
  return version;
}
