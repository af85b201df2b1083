import { closeSync, openSync, readFileSync, statSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { DamagedStoreError, DISK_FULL_MESSAGE, DiskFullError, storeFaultOf } from './faults.js';
import { checkStore, migrateStore } from './maintenance.js';
import { RunStore, SqliteRunStore } from './run-store.js';
import { SCHEMA_VERSION } from './schema.js';
import { TEST_MANIFEST } from './testing/fakes.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';
import { oldStoreWithDoneRun } from './testing/old-schema.js';

const tmp = useTempDir('echolens-maint-', 'test');

/** A store with one run and enough rows to span many pages. */
async function filledStore(file: string): Promise<void> {
  const store = SqliteRunStore.open(file);
  const id = await store.createRun(TEST_MANIFEST);
  store.db.exec('CREATE TABLE padding (x TEXT)');
  const insert = store.db.prepare('INSERT INTO padding VALUES (?)');
  for (let i = 0; i < 400; i++) insert.run(`${i}`.padEnd(500, 'x'));
  await store.setRunStatus(id, 'done');
  store.db.pragma('wal_checkpoint(TRUNCATE)');
  await store.close();
}

describe('store faults', () => {
  it('turns a real SQLITE_FULL into the disk-full message (a page limit stands in for a full disk)', () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (x TEXT)');
    db.pragma('max_page_count = 3');
    let raised: unknown;
    try {
      for (let i = 0; i < 100; i++) db.prepare('INSERT INTO t VALUES (?)').run('y'.repeat(4000));
    } catch (error) {
      raised = error;
    }
    db.close();
    expect((raised as { code?: string }).code).toBe('SQLITE_FULL');
    const fault = storeFaultOf(raised, 'runs.db');
    expect(fault).toBeInstanceOf(DiskFullError);
    expect(fault?.message).toBe(DISK_FULL_MESSAGE);
    expect(fault?.message).toBe('disk full — free space, then re-run to resume');
    expect(fault?.hint).toBe('the run store is runs.db');
    // Wrapped by a caller, still found; anything else is not a store fault.
    expect(storeFaultOf(new Error('wrapped', { cause: raised }))).toBeInstanceOf(DiskFullError);
    expect(storeFaultOf(Object.assign(new Error('x'), { code: 'ENOSPC' }))).toBeInstanceOf(DiskFullError);
    expect(storeFaultOf(Object.assign(new Error('x'), { code: 'SQLITE_CORRUPT_INDEX' }), 'a.db')).toBeInstanceOf(DamagedStoreError);
    expect(storeFaultOf(new Error('plain'))).toBeUndefined();
    expect(storeFaultOf(Object.assign(new Error('busy'), { code: 'SQLITE_BUSY' }))).toBeUndefined();
  });

  it('names a file that is not a database as a damaged store (exit 2, no internal error), and `runs check` exits 1', async () => {
    const file = join(tmp.path, 'garbage.db');
    writeFileSync(file, 'this is not a sqlite file at all, just text padded out\n'.repeat(200));
    expect(() => RunStore.open(file, { readonly: true })).toThrow(DamagedStoreError);
    const report = await runCliInProcess(['report', file, '--format', 'md']);
    expect(report.code).toBe(2);
    expect(report.stderr).toContain(`echolens: ${file} is damaged (file is not a database) — check it with \`echolens runs check ${file}\``);
    expect(report.stderr).not.toMatch(/internal error|\n\s+at /u);
    const check = await runCliInProcess(['runs', 'check', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`${file}: damaged`);
    expect(check.stdout).toContain('unreadable: file is not a database');
  });

  it('finds damaged pages with the integrity check; a healthy store checks ok', async () => {
    const file = join(tmp.path, 'runs.db');
    await filledStore(file);
    expect(checkStore(file)).toEqual({ file, ok: true, findings: [], schemaVersion: SCHEMA_VERSION });
    const ok = await runCliInProcess(['runs', 'check', file]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`${file}: ok (schema version ${SCHEMA_VERSION})`);
    // Scribble over pages in the middle of the file (past the header and schema pages).
    const size = statSync(file).size;
    const fd = openSync(file, 'r+');
    writeSync(fd, Buffer.alloc(4096 * 3, 0xa5), 0, 4096 * 3, Math.floor(size / 2 / 4096) * 4096);
    closeSync(fd);
    const result = checkStore(file);
    expect(result.ok).toBe(false);
    expect(result.findings.length).toBeGreaterThan(0);
    const bad = await runCliInProcess(['runs', 'check', file, '--json']);
    expect(bad.code).toBe(1);
    expect(JSON.parse(bad.stdout)).toMatchObject({ ok: false });
    expect(readFileSync(file).length).toBe(size); // checking never writes
  });
});

describe('migrating an old store', () => {
  it('a schema-1 store read by a read-only command names the command that migrates it; `runs migrate` does', async () => {
    const file = join(tmp.path, 'v1.db');
    // Back to schema 1: drop what migrations 2–5 added.
    const id = await oldStoreWithDoneRun(
      file,
      1,
      'DROP TABLE blobs; DROP TABLE batch_job_cells; DROP TABLE batch_jobs; DROP TABLE run_stages; ALTER TABLE cells DROP COLUMN tool_calls;',
    );
    const listed = await runCliInProcess(['runs', 'list', file]);
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(`echolens: ${file}: store schema version 1 needs a migration first: run \`echolens runs migrate ${file}\``);
    expect(listed.stderr).not.toContain('--readonly');
    const migrated = await runCliInProcess(['runs', 'migrate', file]);
    expect(migrated.code).toBe(0);
    expect(migrated.stdout).toContain(`${file}: migrated from schema version 1 to ${SCHEMA_VERSION}`);
    const after = await runCliInProcess(['runs', 'list', file]);
    expect(after.code).toBe(0);
    expect(after.stdout).toContain(id);
    expect(await migrateStore(file)).toEqual({ file, from: SCHEMA_VERSION, to: SCHEMA_VERSION });
  });
});
