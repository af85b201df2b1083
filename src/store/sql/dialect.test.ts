import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { numberPlaceholders, postgresDialect, sqliteDialect } from './dialect.js';
import { SqliteExecutor } from './executor.js';

describe('numberPlaceholders', () => {
  it('numbers each ? outside quotes and comments', () => {
    expect(numberPlaceholders(`SELECT ? , '?''?' AS "a?", x -- why?\n FROM t WHERE a = ? AND b LIKE '%"$blob%' AND c = ?`)).toBe(
      `SELECT $1 , '?''?' AS "a?", x -- why?\n FROM t WHERE a = $2 AND b LIKE '%"$blob%' AND c = $3`,
    );
  });
});

describe('dialects', () => {
  it('give a list and a table of rows as parameters', () => {
    expect(postgresDialect.inList('c.key', 'text', ['a', 'b'])).toEqual({ sql: 'c.key = ANY(?::text[])', params: [['a', 'b']] });
    const rows = postgresDialect.rows(
      [
        ['k', 'text'],
        ['n', 'int'],
      ],
      [
        ['a', 1],
        ['b', null],
      ],
    );
    expect(rows.sql).toBe('(SELECT * FROM unnest(?::text[], ?::int[]) WITH ORDINALITY AS u(k, n, i))');
    expect(rows.params).toEqual([
      ['a', 'b'],
      [1, null],
    ]);
  });

  it('run the same statements on SQLite', async () => {
    const exec = new SqliteExecutor(new Database(':memory:'));
    await exec.run('CREATE TABLE t (k TEXT PRIMARY KEY, n INTEGER, x REAL, labels TEXT)');
    const rows = sqliteDialect.rows(
      [
        ['k', 'text'],
        ['n', 'int'],
        ['x', 'float8'],
        ['labels', 'text'],
      ],
      [
        ['b', 2, 0.1 + 0.2, '{"flag":true}'],
        ['a', null, 1e-300, '{"flag":false,"s":"x\\u0000"}'],
        ['b', 9, 9, '{}'],
      ],
    );
    const inserted = await exec.run(
      `INSERT INTO t (k, n, x, labels) SELECT k, n, x, labels FROM ${rows.sql} t WHERE true ORDER BY t.i ON CONFLICT DO NOTHING`,
      rows.params,
    );
    expect(inserted).toBe(2);
    expect(await exec.all('SELECT k, n, x FROM t ORDER BY rowid')).toEqual([
      { k: 'b', n: 2, x: 0.1 + 0.2 },
      { k: 'a', n: null, x: 1e-300 },
    ]);
    const list = sqliteDialect.inList('k', 'text', ['a', 'zz']);
    expect(await exec.raw(`SELECT k, n FROM t WHERE ${list.sql}`, list.params, (row) => row.join(':'))).toEqual(['a:']);
    const flag = sqliteDialect.labelEquals('labels', 'flag', true);
    expect(await exec.all(`SELECT k FROM t WHERE ${flag.sql}`, flag.params)).toEqual([{ k: 'b' }]);
  });

  it('roll a SQLite transaction back and keep other callers out of it', async () => {
    const exec = new SqliteExecutor(new Database(':memory:'));
    await exec.run('CREATE TABLE t (n INTEGER)');
    let release!: () => void;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const tx = exec.transaction(async () => {
      await exec.run('INSERT INTO t VALUES (1)');
      await gate;
      throw new Error('rolled back');
    });
    // Issued while the transaction is open: it waits, and so is not rolled back with it.
    const outside = exec.run('INSERT INTO t VALUES (2)');
    release();
    await expect(tx).rejects.toThrow('rolled back');
    await outside;
    expect(await exec.all('SELECT n FROM t')).toEqual([{ n: 2 }]);
  });
});
