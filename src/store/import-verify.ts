import { closeSync, readSync } from 'node:fs';
import Database from 'better-sqlite3';
import { InputError } from '../core/errors.js';
import { jsonTextTooDeep, MAX_JSON_DEPTH, openRegularFile } from '../core/user-files.js';
import type { ModelRequest } from '../models/types.js';
import { BlobCache, decodeRequest } from './blobs.js';
import { requestKeys } from './request-hash.js';
import { checkStorePath } from './store-path.js';

/**
 * `echolens runs import` reads a SQLite file someone else may have written: before any of it is
 * opened as a store or copied, every record it will copy is checked here, straight from the file
 * (no store code that could trust it): the file is a SQLite database that passes SQLite's own
 * check and has the store's tables; every JSON column parses and is nested no deeper than the
 * limit; every cell's key is recomputed from its request (a forged answer, filed under a key that
 * its request does not hash to, is refused); a `done` cell has an answer. The first problem is an
 * InputError naming the file and the record (table, row, run, cell key) — exit 2, nothing copied.
 */

export interface ImportCheck {
  runs: number;
  cells: number;
}

const SQLITE_HEADER = 'SQLite format 3\u0000';

function header(file: string): string {
  const { fd } = openRegularFile(file);
  try {
    const buffer = Buffer.alloc(16);
    const n = readSync(fd, buffer, 0, 16, 0);
    return buffer.subarray(0, n).toString('latin1');
  } finally {
    closeSync(fd);
  }
}

function parseColumn(text: unknown, file: string, record: string): unknown {
  if (typeof text !== 'string') throw new InputError(`${record} is not JSON text`, { file, field: record });
  const deep = jsonTextTooDeep(text, MAX_JSON_DEPTH);
  if (deep) throw new InputError(`${record} is nested more than ${MAX_JSON_DEPTH} levels deep`, { file, field: record });
  try {
    return JSON.parse(text);
  } catch {
    throw new InputError(`${record} is not valid JSON`, { file, field: record });
  }
}

/** Checks a SQLite store file before `runs import` copies `ids` (every run when empty); throws naming the first bad record. */
export function verifyStoreFileForImport(file: string, ids: readonly string[] = []): ImportCheck {
  checkStorePath(file, true);
  if (header(file) !== SQLITE_HEADER) throw new InputError('not a SQLite database (no SQLite header): not an echolens run store', { file });
  let db: Database.Database;
  try {
    db = new Database(file, { readonly: true, fileMustExist: true });
  } catch (error) {
    throw new InputError(`cannot open as SQLite: ${(error as Error).message}`, { file }, { cause: error });
  }
  try {
    return verifyOpen(db, file, ids);
  } catch (error) {
    if (error instanceof InputError) throw error;
    // SQLite's own errors on a damaged file (SQLITE_CORRUPT, SQLITE_NOTADB): input, not an internal error.
    throw new InputError(`damaged SQLite file: ${(error as Error).message}`, { file }, { cause: error });
  } finally {
    db.close();
  }
}

function verifyOpen(db: Database.Database, file: string, ids: readonly string[]): ImportCheck {
  const check = db.pragma('quick_check', { simple: true });
  if (check !== 'ok') throw new InputError(`damaged SQLite file: ${String(check).slice(0, 200)}`, { file });
  const tables = new Set((db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[]).map(String));
  for (const table of ['runs', 'cells', 'run_cells']) {
    if (!tables.has(table)) throw new InputError(`not an echolens run store: no table "${table}"`, { file });
  }
  const wanted = new Set(ids);
  const runIds: string[] = [];
  let row = 0;
  for (const run of db.prepare('SELECT id, manifest, summary FROM runs ORDER BY rowid').iterate() as Iterable<Record<string, unknown>>) {
    row++;
    const id = typeof run.id === 'string' ? run.id : '';
    if (id === '') throw new InputError(`runs row ${row} has no run id`, { file, field: `runs[${row}].id` });
    if (wanted.size > 0 && !wanted.has(id)) continue;
    runIds.push(id);
    const manifest = parseColumn(run.manifest, file, `runs[${row}] (run ${id}).manifest`);
    if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
      throw new InputError(`runs[${row}] (run ${id}).manifest is not an object`, { file, field: `runs[${row}].manifest` });
    }
    if (run.summary !== null && run.summary !== undefined) parseColumn(run.summary, file, `runs[${row}] (run ${id}).summary`);
  }
  for (const id of wanted) if (!runIds.includes(id)) throw new InputError(`no run ${id} in this store`, { file, field: '--run' });

  const blobBody = tables.has('blobs') ? db.prepare('SELECT body FROM blobs WHERE hash = ?').pluck() : undefined;
  const blobs = new BlobCache((hash) => {
    const body = blobBody?.get(hash);
    if (typeof body !== 'string') return undefined;
    if (jsonTextTooDeep(body, MAX_JSON_DEPTH))
      throw new InputError(`blob ${hash} is nested more than ${MAX_JSON_DEPTH} levels deep`, { file, field: `blobs[${hash}]` });
    return body;
  });
  const hasToolCalls = (db.prepare("SELECT name FROM pragma_table_info('cells')").pluck().all() as string[]).includes('tool_calls');
  const cellsOf = db.prepare(
    `SELECT rc.rowid AS link, rc.labels AS labels, rc.key AS key, c.key AS cell_key, c.request AS request, c.status AS status, c.text AS text${hasToolCalls ? ', c.tool_calls AS tool_calls' : ''}
     FROM run_cells rc LEFT JOIN cells c ON c.key = rc.key WHERE rc.run_id = ? ORDER BY rc.ordinal`,
  );
  let cells = 0;
  for (const id of runIds) {
    for (const cell of cellsOf.iterate(id) as Iterable<Record<string, unknown>>) {
      cells++;
      const key = String(cell.key);
      const record = `cell ${key.slice(0, 16)} of run ${id}`;
      const field = (column: string) => `${record}.${column}`;
      parseColumn(cell.labels, file, field('labels'));
      if (cell.cell_key === null || cell.cell_key === undefined)
        throw new InputError(`${record} is in the run's plan but not in the cells table`, { file, field: field('key') });
      const stored = parseColumn(cell.request, file, field('request'));
      if (stored === null || typeof stored !== 'object') throw new InputError(`${record}: the request is not an object`, { file, field: field('request') });
      let request: ModelRequest;
      let keys: ReturnType<typeof requestKeys>;
      try {
        request = decodeRequest(cell.request as string, blobs);
        keys = requestKeys(request);
      } catch (error) {
        if (error instanceof InputError) throw error;
        throw new InputError(
          `${record}: the request cannot be read (${(error as Error).message.slice(0, 160)})`,
          { file, field: field('request') },
          { cause: error },
        );
      }
      if (keys.key !== key && keys.legacyKey !== key) {
        throw new InputError(
          `${record}: its key does not match its request (the request hashes to ${keys.key.slice(0, 16)}): a forged or altered cell, refused`,
          { file, field: field('key') },
        );
      }
      if (typeof cell.tool_calls === 'string') parseColumn(cell.tool_calls, file, field('tool_calls'));
      const answered = typeof cell.text === 'string' && cell.text.trim() !== '';
      const toolCalls = typeof cell.tool_calls === 'string' && cell.tool_calls !== '[]' && cell.tool_calls !== 'null';
      if (cell.status === 'done' && !answered && !toolCalls) {
        throw new InputError(`${record} is marked done but has no answer (empty text, no tool calls): refused`, { file, field: field('text') });
      }
    }
  }
  return { runs: runIds.length, cells };
}
