#!/usr/bin/env node
// Which store statements are written twice, once per backend (issue 38: "the SQL for cells,
// stages, batch jobs, blobs and export exists once"). Reads the store's files at a git revision
// (default: the work tree), finds each statement of the list below in the SQLite-only files and
// in the PostgreSQL-only files, and prints the statements found on both sides, plus line counts.
//
//   node tools/sql-twice.mjs [revision]
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';

const revision = process.argv[2];
const SQLITE = ['src/store/run-store.ts', 'src/store/run-stages.ts', 'src/store/batch-jobs.ts'];
const POSTGRES = ['src/store/postgres/pg-store.ts', 'src/store/postgres/pg-batch-jobs.ts', 'src/store/postgres/shared-work.ts'];
const SHARED = ['src/store/sql/sql-store.ts', 'src/store/sql/dialect.ts', 'src/store/sql/executor.ts', 'src/store/postgres/transfer.ts'];

// One entry per statement the store runs (SQL text, whitespace collapsed).
const STATEMENTS = {
  'runs: insert': /INSERT (OR IGNORE )?INTO runs /,
  'runs: get': /SELECT \* FROM runs WHERE id/,
  'runs: list': /SELECT \* FROM runs ORDER BY/,
  'runs: counts by status': /count\(\*\)[^`'"]*FROM run_cells rc JOIN cells c/,
  'runs: set status': /UPDATE runs SET status/,
  'runs: set times': /UPDATE runs SET started_at/,
  'runs: delete links': /DELETE FROM run_cells WHERE run_id/,
  'runs: delete stages': /DELETE FROM run_stages/,
  'runs: delete row': /DELETE FROM runs WHERE id/,
  'runs: delete orphan cells': /DELETE FROM cells/,
  'blobs: delete unreferenced': /DELETE FROM blobs/,
  'blobs: read': /SELECT (hash, )?body FROM blobs/,
  'blobs: insert': /INTO blobs \(hash, body\)/,
  'stages: declare': /INTO run_stages \(run_id, stage, ordinal, expected, registered, settled, updated_at\) VALUES \(\S+, \S+, \S+, \S+, 0, 0/,
  'stages: record': /INTO run_stages [^`]*coalesce\(max\(ordinal\) \+ 1, 0\)/,
  'stages: read': /SELECT stage, ordinal, expected, registered, settled, updated_at FROM run_stages/,
  'cells: which keys exist': /SELECT (1|key) FROM cells WHERE (key|\$\{list\.sql\})/,
  'cells: insert': /INTO cells \((key, content_key|\$\{names\}, status)/,
  'cells: link to run': /INTO run_cells \(run_id, key, labels, ordinal\)/,
  'cells: get one': /FROM cells( c)? WHERE (c\.)?key = (\?|\$1)(`|'| )/,
  'cells: results of a run': /FROM run_cells rc JOIN cells c ON c\.key = rc\.key WHERE rc\.run_id = (\?|\$1)( ORDER BY rc\.ordinal)?(`|'|,)/,
  'cells: request': /SELECT request FROM cells WHERE key/,
  'cells: begin attempts': /UPDATE cells SET attempts = attempts \+ 1/,
  'cells: write outcomes': /UPDATE cells( AS)?( c)? SET status = (\?|\$1|i\.status), attempts = /,
  'cells: query of a run (labels, status)': /rc\.labels, rc\.ordinal FROM run_cells rc JOIN cells c ON c\.key = rc\.key WHERE \$\{clauses/,
  'cells: index of a run': /SELECT rc\.key AS key, rc\.labels AS labels, rc\.ordinal AS ordinal, c\.status AS status/,
  'cells: by content': /WHERE (c\.)?content_key = /,
  'export: page': /SELECT c\.\*, rc\.labels, rc\.ordinal FROM run_cells rc/,
  'export: response models': /SELECT c\.key AS key, c\.response_model AS response_model/,
  'batch: insert job': /INSERT INTO batch_jobs /,
  'batch: insert job cells': /INSERT (OR IGNORE )?INTO batch_job_cells/,
  'batch: submitted': /UPDATE batch_jobs SET batch_id/,
  'batch: observed': /UPDATE batch_jobs SET provider_status/,
  'batch: finish': /UPDATE batch_jobs SET status/,
  'batch: get': /SELECT \* FROM batch_jobs WHERE id/,
  'batch: open': /SELECT \* FROM batch_jobs WHERE (status|\$\{list\.sql\} ORDER BY id)/,
  'batch: all': /SELECT \* FROM batch_jobs ORDER BY id/,
  'batch: of a run': /SELECT \* FROM batch_jobs WHERE run_id/,
  'batch: job keys': /(SELECT key|SELECT job_id, key) FROM batch_job_cells/,
};

function read(path) {
  if (revision === undefined) return existsSync(path) ? readFileSync(path, 'utf8') : '';
  try {
    return execFileSync('git', ['show', `${revision}:${path}`], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] });
  } catch {
    return '';
  }
}

const text = (paths) => paths.map((path) => read(path).replace(/\s+/g, ' ')).join('\n');
const sqlite = text(SQLITE);
const postgres = text(POSTGRES);
const shared = text(SHARED);
// transfer.ts held a statement per backend side by side (`if (store instanceof …)`): two matches there are twice too.
const transfer = read('src/store/postgres/transfer.ts').replace(/\s+/g, ' ');

const twice = [];
const once = [];
for (const [name, pattern] of Object.entries(STATEMENTS)) {
  const global = new RegExp(pattern.source, 'g');
  const inTransfer = (transfer.match(global) ?? []).length;
  if ((pattern.test(sqlite) && pattern.test(postgres)) || inTransfer >= 2) twice.push(name);
  else if (pattern.test(sqlite) || pattern.test(postgres) || pattern.test(shared)) once.push(name);
  else once.push(`${name} (not found)`);
}
const lines = (paths) => paths.reduce((sum, path) => sum + (read(path).match(/\n/g) ?? []).length, 0);
const all = [...SQLITE, ...POSTGRES, ...SHARED, 'src/store/postgres/pg-client.ts'];
console.log(`revision ${revision ?? '(work tree)'}`);
console.log(`statements written twice: ${twice.length} of ${twice.length + once.length}`);
for (const name of twice) console.log(`  twice: ${name}`);
for (const name of once.filter((n) => n.endsWith('(not found)'))) console.log(`  ${name}`);
console.log(`lines of SQL-bearing store code: ${lines(all)} (${all.filter((p) => read(p) !== '').length} files)`);
