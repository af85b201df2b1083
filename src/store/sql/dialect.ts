/**
 * What differs between the SQL of the two store backends, and nothing else. Every query of
 * the store is written once (src/store/sql/), in the SQL both SQLite (≥ 3.38, bundled with
 * better-sqlite3) and PostgreSQL accept — `?` placeholders, `INSERT … ON CONFLICT`,
 * `UPDATE … FROM`, `RETURNING`, `CAST(… AS INTEGER)`, window functions — and asks the
 * dialect for the few pieces they spell differently:
 *
 * - placeholders: `?` in SQLite, `$n` in PostgreSQL (the PostgreSQL executor numbers them);
 * - a list as one parameter (`x IN (SELECT value FROM json_each(?))` / `x = ANY(?::text[])`),
 *   so a query's text does not depend on how many keys it asks for;
 * - a table of rows as parameters (`json_each` of a JSON array / `unnest` of typed arrays):
 *   inserts and updates of many rows are one statement, one round trip;
 * - byte-wise ordering of text (SQLite's default; PostgreSQL's `COLLATE "C"`);
 * - JSON: a label of `run_cells.labels` compared with a value as SQLite's `json_extract` does;
 * - the catalog (does a table exist) and the insertion order of `batch_job_cells`;
 * - `shared`: the PostgreSQL schema's extra columns for work shared by worker processes
 *   (leases, prefix groups, open attempts, spend), which the queries write where they exist.
 */

/** Column types of a parameter table (PostgreSQL array element types; SQLite reads them from JSON). */
export type SqlType = 'text' | 'int' | 'float8' | 'bigint';

export interface SqlDialect {
  readonly name: 'sqlite' | 'postgres';
  /** The schema has the shared-store columns (leases, prefix_group, open_attempts, runs.spent_usd). */
  readonly shared: boolean;
  /** An ORDER BY term comparing text byte by byte. */
  bytewise(expr: string): string;
  /** `expr` is one of the values, given as the one parameter the fragment holds. */
  inList(expr: string, type: SqlType, values: readonly unknown[]): Fragment;
  /**
   * A parenthesized SELECT of the rows with the given columns, plus `i` (0, 1, … in the
   * rows' order); use it as `FROM ${rows.sql} t` or `WITH input AS ${rows.sql}`.
   */
  rows(columns: ReadonlyArray<readonly [string, SqlType]>, rows: ReadonlyArray<readonly unknown[]>): Fragment;
  /** `labels` (canonical JSON) has the label `name` equal to `value` (a missing label equals null; booleans compare as 1/0). */
  labelEquals(labels: string, name: string, value: unknown): Fragment;
  /** A query with one parameter (the table's name) that returns a row when the store's table exists. */
  readonly tableExistsSql: string;
  /** The column of `batch_job_cells` that orders a job's keys as they were inserted. */
  readonly jobCellOrder: string;
}

/** The columns of a parameter table (`rows`), in the record's key order. */
export function columns(types: Record<string, SqlType>): Array<[string, SqlType]> {
  return Object.entries(types);
}

/** A piece of SQL with its parameters, in order. */
export interface Fragment {
  sql: string;
  params: unknown[];
}

export const sqliteDialect: SqlDialect = {
  name: 'sqlite',
  shared: false,
  bytewise: (expr) => expr,
  inList: (expr, _type, values) => ({ sql: `${expr} IN (SELECT value FROM json_each(?))`, params: [JSON.stringify(values)] }),
  rows: (columns, rows) => ({
    sql: `(SELECT ${columns.map(([name], index) => `value ->> ${index} AS ${name}`).join(', ')}, key AS i FROM json_each(?))`,
    params: [JSON.stringify(rows)],
  }),
  labelEquals: (labels, name, value) => ({
    sql: `json_extract(${labels}, ?) IS ?`,
    params: [`$."${name.replace(/"/g, '""')}"`, typeof value === 'boolean' ? Number(value) : value],
  }),
  tableExistsSql: "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?",
  jobCellOrder: 'rowid',
};

export const postgresDialect: SqlDialect = {
  name: 'postgres',
  shared: true,
  bytewise: (expr) => `${expr} COLLATE "C"`,
  inList: (expr, type, values) => ({ sql: `${expr} = ANY(?::${type}[])`, params: [[...values]] }),
  rows: (columns, rows) => ({
    sql: `(SELECT * FROM unnest(${columns.map(([, type]) => `?::${type}[]`).join(', ')}) WITH ORDINALITY AS u(${columns.map(([name]) => name).join(', ')}, i))`,
    params: columns.map((_, index) => rows.map((row) => row[index] ?? null)),
  }),
  // SQLite's json_extract turns JSON true/false into 1/0; compare the same way.
  labelEquals: (labels, name, value) => ({
    sql: `(CASE jsonb_typeof(${labels}::jsonb -> ?) WHEN 'boolean' THEN to_jsonb(((${labels}::jsonb ->> ?)::boolean)::int) ELSE coalesce(${labels}::jsonb -> ?, 'null'::jsonb) END) = ?::jsonb`,
    params: [name, name, name, JSON.stringify(typeof value === 'boolean' ? Number(value) : value)],
  }),
  tableExistsSql: "SELECT 1 FROM information_schema.tables WHERE table_schema = 'echolens' AND table_name = ?",
  jobCellOrder: 'position',
};

/**
 * The statement with PostgreSQL's numbered placeholders: each `?` outside a quoted string,
 * identifier or comment becomes `$1`, `$2`, … in order.
 */
export function numberPlaceholders(sql: string): string {
  let n = 0;
  // A quoted string or identifier or a comment is kept whole (one left open runs to the end).
  return sql.replace(/'[^']*'?|"[^"]*"?|--[^\n]*|\?/g, (match) => (match === '?' ? `$${++n}` : match));
}
