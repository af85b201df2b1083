// `runs import` reads a store file from elsewhere (issue #40): a cell filed under a key its request
// does not hash to (a forged answer), a done cell without an answer, and malformed stores are each
// refused with exit 2 naming the file and the record, before anything is opened or copied.
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../src/cli/testing/run-cli.js';
import { writeContextEchoArchive } from '../../src/persona-drift/testing/contextecho-archive.js';
import { verifyStoreFileForImport } from '../../src/store/import-verify.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-runs-import-'));
const good = join(dir, 'good.db');
// Never reached: every case below is refused before the destination is opened.
const URL = 'postgres://127.0.0.1:1/never';
let n = 0;

/** A copy of the good store with `sql` applied. */
function variant(sql: string): string {
  const file = join(dir, `v${n++}.db`);
  copyFileSync(good, file);
  const db = new Database(file);
  db.exec(sql);
  db.close();
  return file;
}

const importFile = (file: string) => runCliInProcess(['runs', 'import', file, URL]);
const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at |internal error/u);

describe('runs import: verified before anything is copied', { timeout: 300_000 }, () => {
  beforeAll(async () => {
    writeContextEchoArchive(join(dir, 'archive'));
    const r = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', join(dir, 'archive'), '--db', good]);
    expect(r.code).toBe(0);
    // Fold the WAL into the file so that copies carry everything.
    const db = new Database(good);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.pragma('journal_mode = DELETE');
    db.close();
  });

  it('the untouched store passes: every cell key recomputed from its request', () => {
    expect(verifyStoreFileForImport(good)).toEqual({ runs: 1, cells: 60 });
  });

  it('a forged answer (request altered under the same key) is refused naming the cell', async () => {
    const file = variant(
      `UPDATE cells SET request = replace(request, 'q C02', 'q C02 forged') WHERE key = (SELECT key FROM cells WHERE request LIKE '%q C02%' LIMIT 1)`,
    );
    const r = await importFile(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/v\d+\.db.*cell [0-9a-f]{16} of run persona-import-[0-9a-f]+: its key does not match its request/su);
    noStack(r.stderr);
  });

  it('a done cell with empty text is refused naming the cell', async () => {
    const file = variant(`UPDATE cells SET text = '   ' WHERE key = (SELECT key FROM cells WHERE status = 'done' LIMIT 1)`);
    const r = await importFile(file);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/cell [0-9a-f]{16} of run .* is marked done but has no answer/su);
  });

  const malformed: Array<[string, () => string, RegExp]> = [
    ['a manifest that is not JSON', () => variant(`UPDATE runs SET manifest = '{not json'`), /runs\[1\] \(run .*\)\.manifest is not valid JSON/u],
    [
      'labels that are not JSON',
      () => variant(`UPDATE run_cells SET labels = 'x' WHERE rowid = (SELECT min(rowid) FROM run_cells)`),
      /\.labels is not valid JSON/u,
    ],
    [
      'a request that is not JSON',
      () => variant(`UPDATE cells SET request = '[[[' WHERE rowid = (SELECT min(rowid) FROM cells)`),
      /\.request is not valid JSON/u,
    ],
    [
      'a request nested 100,000 deep',
      () => variant(`UPDATE cells SET request = '${'['.repeat(100_000)}${']'.repeat(100_000)}' WHERE rowid = (SELECT min(rowid) FROM cells)`),
      /\.request is nested more than 64 levels deep/u,
    ],
    [
      'a request of the wrong shape',
      () => variant(`UPDATE cells SET request = '{"model":3}' WHERE rowid = (SELECT min(rowid) FROM cells)`),
      /the request cannot be read/u,
    ],
    [
      'a plan row whose cell is missing',
      () => variant(`PRAGMA foreign_keys = OFF; DELETE FROM cells WHERE rowid = (SELECT min(rowid) FROM cells)`),
      /not in the cells table/u,
    ],
    ['a store without its run_cells table', () => variant('DROP TABLE run_cells'), /not an echolens run store: no table "run_cells"/u],
    [
      'a truncated file',
      () => {
        const file = join(dir, `v${n++}.db`);
        const bytes = readFileSync(good);
        writeFileSync(file, bytes.subarray(0, Math.floor(bytes.length / 3)));
        return file;
      },
      /damaged SQLite file|not valid JSON|cannot open/u,
    ],
    [
      'random bytes',
      () => {
        const file = join(dir, `v${n++}.db`);
        writeFileSync(file, Buffer.from(Array.from({ length: 8192 }, (_, i) => (i * 7919) % 251)));
        return file;
      },
      /not a SQLite database/u,
    ],
    [
      'a SQLite file of another program',
      () => {
        const file = join(dir, `v${n++}.db`);
        const db = new Database(file);
        db.exec('CREATE TABLE t (x)');
        db.close();
        return file;
      },
      /not an echolens run store: no table "runs"/u,
    ],
  ];
  for (const [name, make, message] of malformed) {
    it(`${name}: exit 2 naming the file and record`, async () => {
      const file = make();
      const r = await importFile(file);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(file);
      expect(r.stderr).toMatch(message);
      noStack(r.stderr);
    });
  }
});
