/**
 * The store's tables, written once for both backends: the SQLite store (schema.ts and
 * its migrations) and the PostgreSQL store (postgres/schema.ts) have the same columns
 * with the same meanings, and differ only in a few types (`$real`, `$id`, `$ref` below)
 * and in the shared-store columns PostgreSQL adds (given as `extra`).
 */

export type TableDialect = 'sqlite' | 'postgres';

const TYPES: Record<TableDialect, Record<string, string>> = {
  sqlite: { real: 'REAL', id: 'INTEGER PRIMARY KEY AUTOINCREMENT', ref: 'INTEGER' },
  postgres: { real: 'DOUBLE PRECISION', id: 'BIGSERIAL PRIMARY KEY', ref: 'BIGINT' },
};

const TABLES = {
  meta: ['name TEXT PRIMARY KEY', 'value TEXT NOT NULL'],
  runs: [
    'id TEXT PRIMARY KEY',
    'experiment TEXT NOT NULL',
    'manifest TEXT NOT NULL',
    "status TEXT NOT NULL CHECK (status IN ('running', 'done', 'interrupted', 'stopped', 'failed'))",
    'started_at TEXT NOT NULL',
    'updated_at TEXT NOT NULL',
    'ended_at TEXT',
    'summary TEXT',
  ],
  // The columns of schema version 1; later ones (tool_calls, …) are added by migrations.
  cells: [
    'key TEXT PRIMARY KEY',
    'content_key TEXT NOT NULL',
    'model TEXT NOT NULL',
    'sample INTEGER NOT NULL',
    'request TEXT NOT NULL',
    "status TEXT NOT NULL CHECK (status IN ('pending', 'done', 'empty', 'failed'))",
    'attempts INTEGER NOT NULL DEFAULT 0',
    'text TEXT',
    'reasoning TEXT',
    'finish_reason TEXT',
    'response_model TEXT',
    'input_tokens INTEGER NOT NULL DEFAULT 0',
    'output_tokens INTEGER NOT NULL DEFAULT 0',
    'cached_input_tokens INTEGER NOT NULL DEFAULT 0',
    'cache_write_tokens INTEGER NOT NULL DEFAULT 0',
    'reasoning_tokens INTEGER NOT NULL DEFAULT 0',
    'latency_ms $real',
    'cost_usd $real',
    'error_class TEXT',
    'error_message TEXT',
    'started_at TEXT',
    'finished_at TEXT',
    'created_at TEXT NOT NULL',
  ],
  run_cells: [
    'run_id TEXT NOT NULL REFERENCES runs (id)',
    'key TEXT NOT NULL REFERENCES cells (key)',
    'labels TEXT NOT NULL',
    'ordinal INTEGER NOT NULL',
    'PRIMARY KEY (run_id, key, labels)',
  ],
  blobs: ['hash TEXT PRIMARY KEY', 'body TEXT NOT NULL'],
  batch_jobs: [
    'id $id',
    'run_id TEXT NOT NULL',
    'provider TEXT NOT NULL',
    'model TEXT NOT NULL',
    'batch_id TEXT',
    "status TEXT NOT NULL CHECK (status IN ('submitting', 'submitted', 'ended', 'collected', 'failed', 'abandoned'))",
    'provider_status TEXT',
    'submitted_at TEXT NOT NULL',
    'ended_at TEXT',
    'note TEXT',
  ],
  batch_job_cells: ['job_id $ref NOT NULL REFERENCES batch_jobs (id)', 'key TEXT NOT NULL', 'PRIMARY KEY (job_id, key)'],
  run_stages: [
    'run_id TEXT NOT NULL REFERENCES runs (id)',
    'stage TEXT NOT NULL',
    'ordinal INTEGER NOT NULL',
    'expected INTEGER',
    'registered INTEGER NOT NULL DEFAULT 0',
    'settled INTEGER NOT NULL DEFAULT 0',
    'updated_at TEXT NOT NULL',
    'PRIMARY KEY (run_id, stage)',
  ],
} as const;

export type TableName = keyof typeof TABLES;

/**
 * `CREATE TABLE IF NOT EXISTS` for the table in the dialect; `extra` columns go after the
 * shared ones and before any table constraint (PostgreSQL's shared-store columns).
 */
export function createTable(dialect: TableDialect, name: TableName, extra: readonly string[] = []): string {
  const definitions: readonly string[] = TABLES[name];
  const constraints = definitions.filter((definition) => definition.startsWith('PRIMARY KEY ('));
  const columns = [...definitions.filter((definition) => !constraints.includes(definition)), ...extra, ...constraints];
  const body = columns.map((column) => `  ${column.replace(/\$(\w+)/g, (_, type: string) => TYPES[dialect][type] ?? `$${type}`)}`);
  return `CREATE TABLE IF NOT EXISTS ${name} (\n${body.join(',\n')}\n);\n`;
}
