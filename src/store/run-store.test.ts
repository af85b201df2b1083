import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import Database from 'better-sqlite3';
import { describe, expect, it, vi } from 'vitest';
import { InputError, InvalidArgumentError } from '../core/errors.js';
import { ZERO_USAGE } from '../models/types.js';
import { cellKey, contentKey } from './keys.js';
import { type CellOutcome, SqliteRunStore } from './run-store.js';
import { SCHEMA_VERSION } from './schema.js';
import { makeSpecs, TEST_MANIFEST, testOutcome } from './testing/fakes.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

const tmp = useTempDir('echolens-store-', 'test');

const outcome = (text: string, status: CellOutcome['status'] = 'done'): CellOutcome => testOutcome({ text, status });

describe('RunStore schema', () => {
  it('creates a WAL store with the current schema version and reopens it', async () => {
    const file = join(tmp.path, 'run.db');
    await SqliteRunStore.open(file).close();
    const store = SqliteRunStore.open(file);
    expect(store.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(store.db.pragma('synchronous', { simple: true })).toBe(1); // NORMAL
    expect(Number(store.db.pragma('busy_timeout', { simple: true }))).toBeGreaterThan(0);
    const version = store.db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get();
    expect(Number(version)).toBe(SCHEMA_VERSION);
    await store.close();
  });

  it('refuses a store written by a newer schema, naming the file', async () => {
    const file = join(tmp.path, 'new.db');
    const store = SqliteRunStore.open(file);
    store.db.prepare("UPDATE meta SET value = '99' WHERE name = 'schema_version'").run();
    await store.close();
    expect(() => SqliteRunStore.open(file)).toThrow(InputError);
    expect(() => SqliteRunStore.open(file)).toThrow(/new\.db: store schema version 99 is newer/);
  });

  it('refuses a foreign SQLite database', () => {
    const file = join(tmp.path, 'foreign.db');
    const db = new Database(file);
    db.exec('CREATE TABLE t (x)');
    db.close();
    expect(() => SqliteRunStore.open(file)).toThrow(/not an echolens run store/);
  });

  it('opens read-only stores and refuses a missing one', async () => {
    const file = join(tmp.path, 'ro.db');
    const writer = SqliteRunStore.open(file);
    const runId = await writer.createRun(TEST_MANIFEST);
    await writer.close();
    const reader = SqliteRunStore.open(file, { readonly: true });
    expect((await reader.getRun(runId))?.experiment).toBe('test');
    await reader.close();
    expect(() => SqliteRunStore.open(join(tmp.path, 'missing.db'), { readonly: true })).toThrow(InputError);
  });
});

describe('RunStore runs and cells', () => {
  it('creates, lists and updates runs; rejects duplicate ids and bad manifests', async () => {
    const store = SqliteRunStore.open(':memory:');
    const a = await store.createRun(TEST_MANIFEST, { id: 'run-a' });
    const b = await store.createRun({ ...TEST_MANIFEST, experiment: 'persona' });
    expect(b).toMatch(/^run-\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    await expect(store.createRun(TEST_MANIFEST, { id: 'run-a' })).rejects.toThrow(/already exists/);
    await expect(store.createRun(TEST_MANIFEST, { id: 'bad id!' })).rejects.toThrow(InvalidArgumentError);
    await expect(store.createRun({ ...TEST_MANIFEST, experiment: '' })).rejects.toThrow(/manifest.experiment/);
    await expect(store.createRun({ ...TEST_MANIFEST, seed: Number.NaN })).rejects.toThrow(/manifest.seed/);
    expect((await store.listRuns()).map((run) => run.id).sort()).toEqual([a, b].sort());
    await store.setRunStatus(a, 'done', { done: 3 });
    const run = await store.requireRun(a);
    expect(run.status).toBe('done');
    expect(run.endedAt).not.toBeNull();
    expect(run.summary).toEqual({ done: 3 });
    expect(run.manifest).toEqual(TEST_MANIFEST);
    await expect(store.requireRun('nope')).rejects.toThrow(/no run "nope"/);
    await expect(store.setRunStatus('nope', 'done')).rejects.toThrow(InvalidArgumentError);
  });

  it('deletes a run and the cells no other run links to', async () => {
    const store = SqliteRunStore.open(':memory:');
    const specs = makeSpecs(3);
    const r1 = await store.createRun(TEST_MANIFEST);
    const r2 = await store.createRun(TEST_MANIFEST);
    await store.registerCells(r1, specs);
    const [shared] = await store.registerCells(r2, [{ request: specs[0]!.request, labels: { other: 'label' } }]);
    expect(await store.deleteRun(r1)).toEqual({ cellsRemoved: 2 });
    expect(await store.getRun(r1)).toBeUndefined();
    expect(store.db.prepare('SELECT count(*) FROM cells').pluck().get()).toBe(1);
    expect((await store.cellsOfRun(r2)).map((cell) => cell.key)).toEqual([shared]);
    await expect(store.deleteRun(r1)).rejects.toThrow(InvalidArgumentError);
    expect(await store.deleteRun(r2)).toEqual({ cellsRemoved: 1 });
    await store.close();
  });

  it('stores a cell shared by two runs once, with each run keeping its own labels', async () => {
    const store = SqliteRunStore.open(':memory:');
    const specs = makeSpecs(3);
    const r1 = await store.createRun(TEST_MANIFEST);
    const r2 = await store.createRun(TEST_MANIFEST);
    const keys1 = await store.registerCells(r1, specs);
    await store.registerCells(r2, [{ request: specs[0]!.request, labels: { other: 'label' } }]);
    expect(keys1).toEqual(specs.map((spec) => cellKey(spec)));
    expect(store.db.prepare('SELECT count(*) FROM cells').pluck().get()).toBe(3);
    expect((await store.cellsOfRun(r2)).map((cell) => cell.labels)).toEqual([{ other: 'label' }]);
    expect((await store.requireRun(r1)).counts).toMatchObject({ pending: 3, total: 3 });
    // Registering the same plan again adds nothing.
    await store.registerCells(r1, specs);
    expect(await store.cellsOfRun(r1)).toHaveLength(3);
  });

  it('never overwrites a done cell, lets failed and empty cells be replaced, and accumulates attempts', async () => {
    const store = SqliteRunStore.open(':memory:');
    const run = await store.createRun(TEST_MANIFEST);
    const [key] = await store.registerCells(run, makeSpecs(1));
    expect(await store.recordResult(key!, { ...outcome('', 'failed'), text: null, errorClass: 'server', errorMessage: 'x' })).toBe(true);
    expect(await store.recordResult(key!, outcome('first'))).toBe(true);
    expect(await store.recordResult(key!, outcome('second'))).toBe(false);
    const cell = (await store.getCell(key!))!;
    expect(cell.text).toBe('first');
    expect(cell.attempts).toBe(2);
    expect(cell.usage).toEqual({ ...ZERO_USAGE, inputTokens: 5, outputTokens: 2 });
    await expect(store.recordResult('0'.repeat(64), outcome('x'))).rejects.toThrow(/register it first/);
  });

  it('filters a run’s cells by labels (string, number, boolean, null) and status', async () => {
    const store = SqliteRunStore.open(':memory:');
    const run = await store.createRun(TEST_MANIFEST);
    const specs = makeSpecs(6).map((spec, index) => ({
      ...spec,
      labels: { ...spec.labels, strong: index < 2, note: index === 5 ? null : 'n' },
    }));
    const keys = await store.registerCells(run, specs);
    await store.recordResult(keys[1]!, outcome('one'));
    await store.recordResult(keys[2]!, outcome('', 'empty'));
    expect((await store.cellsOfRun(run, { labels: { arm: 'real' } })).map((c) => c.labels.index)).toEqual([0, 2, 4]);
    expect((await store.cellsOfRun(run, { labels: { index: 3 } })).map((c) => c.key)).toEqual([keys[3]]);
    expect((await store.cellsOfRun(run, { labels: { strong: true } })).map((c) => c.labels.index)).toEqual([0, 1]);
    expect((await store.cellsOfRun(run, { labels: { note: null } })).map((c) => c.labels.index)).toEqual([5]);
    expect((await store.cellsOfRun(run, { status: 'done' })).map((c) => c.result.text)).toEqual(['one']);
    expect((await store.cellsOfRun(run, { status: ['done', 'empty'], labels: { arm: 'real' } })).map((c) => c.labels.index)).toEqual([2]);
    expect((await store.cellsOfRun(run))[0]!.request).toEqual(specs[0]!.request);
    expect((await store.requireRun(run)).counts).toEqual({ pending: 4, done: 1, empty: 1, failed: 0, total: 6 });
  });

  it('reads a run’s results field for field, as cellsOfRun and getCell do (stored-text escapes, tool calls), and names a missing run', async () => {
    const store = SqliteRunStore.open(':memory:');
    const run = await store.createRun(TEST_MANIFEST);
    const keys = await store.registerCells(run, makeSpecs(4));
    await store.recordResult(keys[0]!, { ...outcome('nul \u0000 and a lone \ud800'), reasoning: 'thought', responseModel: 'm-2026', errorMessage: null });
    await store.recordResult(keys[1]!, {
      ...outcome(''),
      toolCalls: [{ id: 'c1', name: 'read', input: { path: 'a.txt' } }],
      usage: { inputTokens: 9, outputTokens: 3, cachedInputTokens: 4, cacheWriteTokens: 2, reasoningTokens: 1 },
      costUsd: null,
    });
    await store.recordResult(keys[2]!, { ...outcome('x', 'failed'), errorClass: 'server', errorMessage: 'boom' });
    const records = await store.cellResultsOfRun(run);
    expect(records[0]).toEqual({
      runId: run,
      key: keys[0],
      labels: { index: 0, arm: 'real' },
      ordinal: 0,
      model: 'fake:m',
      sample: 0,
      result: {
        ...outcome('nul \u0000 and a lone \ud800'),
        key: keys[0],
        reasoning: 'thought',
        responseModel: 'm-2026',
        cached: false,
      },
    });
    expect(records).toEqual((await store.cellsOfRun(run)).map(({ request: _, ...record }) => record));
    expect(await store.getCell(keys[1]!)).toEqual({ ...records[1]!.result, cached: true });
    expect(records[0]!.result.text).toBe('nul \u0000 and a lone \ud800');
    expect(records[1]!.result.toolCalls).toEqual([{ id: 'c1', name: 'read', input: { path: 'a.txt' } }]);
    expect(records[3]!.result.status).toBe('pending');
    expect((await store.cellResultsOfRun(run, { status: 'failed' })).map((r) => r.result.errorMessage)).toEqual(['boom']);
    await expect(store.cellResultsOfRun('no-such-run')).rejects.toThrow(/no run "no-such-run"/);
  });

  it('counts a run’s cells afresh after its own writes, another connection’s commits and a rolled-back transaction', async () => {
    const file = join(tmp.path, 'counts.db');
    const store = SqliteRunStore.open(file);
    const run = await store.createRun(TEST_MANIFEST);
    const keys = await store.registerCells(run, makeSpecs(4));
    expect((await store.requireRun(run)).counts).toEqual({ pending: 4, done: 0, empty: 0, failed: 0, total: 4 });
    const first = await store.requireRun(run);
    first.counts.done = 99; // a caller's change does not reach the kept count
    await store.recordResult(keys[0]!, outcome('one'));
    expect((await store.requireRun(run)).counts).toEqual({ pending: 3, done: 1, empty: 0, failed: 0, total: 4 });
    const reader = SqliteRunStore.open(file, { readonly: true });
    expect((await reader.requireRun(run)).counts.done).toBe(1);
    // Another connection commits: the reader's next read sees it.
    const other = new Database(file);
    other.prepare("UPDATE cells SET status = 'failed' WHERE key = ?").run(keys[1]!);
    other.close();
    expect((await reader.requireRun(run)).counts).toEqual({ pending: 2, done: 1, empty: 0, failed: 1, total: 4 });
    // Counted inside a transaction that is rolled back: the count after it is the committed one.
    await expect(
      store.transaction(async () => {
        await store.recordResult(keys[2]!, outcome('two'));
        expect((await store.requireRun(run)).counts.done).toBe(2);
        throw new Error('roll back');
      }),
    ).rejects.toThrow('roll back');
    expect((await store.requireRun(run)).counts).toEqual({ pending: 2, done: 1, empty: 0, failed: 1, total: 4 });
    expect((await store.listRuns())[0]!.counts.total).toBe(4);
    await reader.close();
    await store.close();
  });

  it('finds finished cells by content across models', async () => {
    const store = SqliteRunStore.open(':memory:');
    const run = await store.createRun(TEST_MANIFEST);
    const specA = makeSpecs(1, 'a:x')[0]!;
    const specB = { ...specA, request: { ...specA.request, model: 'b:y' } };
    const [ka, kb] = await store.registerCells(run, [specA, specB]);
    expect(ka).not.toBe(kb);
    expect(contentKey(specA.request)).toBe(contentKey(specB.request));
    expect(await store.findByContent(contentKey(specA.request))).toEqual([]);
    await store.recordResult(ka!, outcome('from a'));
    expect((await store.findByContent(contentKey(specA.request))).map((m) => [m.model, m.result.text])).toEqual([['a:x', 'from a']]);
    expect(await store.findByContent(contentKey(specA.request), 'b:y')).toEqual([]);
  });

  it('exports a run as JSON Lines with labels, request and result, in plan order', async () => {
    const store = SqliteRunStore.open(':memory:');
    const run = await store.createRun(TEST_MANIFEST);
    const specs = makeSpecs(1203);
    const keys = await store.registerCells(run, specs);
    await store.recordResult(keys[7]!, outcome('seven'));
    const stream = new PassThrough({ highWaterMark: 1024 });
    const chunks: string[] = [];
    stream.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    const lines = await store.exportJsonl(run, stream);
    stream.end();
    const records = chunks
      .join('')
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toBe(1203);
    expect(records).toHaveLength(1203);
    expect(records.map((r) => r.labels.index)).toEqual(specs.map((_, index) => index));
    expect(records[7]).toMatchObject({ run, key: keys[7], status: 'done', text: 'seven', usage: { inputTokens: 5 } });
    expect(records[7].request).toEqual(specs[7]!.request);
    expect(records[0].status).toBe('pending');
  });
});

describe('secrets never reach the store', () => {
  it('scrubs credential fields and environment key values from requests, manifests and errors', async () => {
    const secret = 'sk-test-9f8e7d6c5b4a39281706';
    const env = { ...process.env, FAKE_PROVIDER_API_KEY: secret };
    const file = join(tmp.path, 'secret.db');
    const store = SqliteRunStore.open(file, { env });
    const run = await store.createRun({
      ...TEST_MANIFEST,
      config: { provider: { apiKey: secret, headers: { Authorization: `Bearer ${secret}` } }, note: `key=${secret}` },
    });
    const spec = makeSpecs(1)[0]!;
    const leaky = {
      request: {
        ...spec.request,
        messages: [{ role: 'user' as const, content: `my key is ${secret}` }],
        params: { providerOptions: { api_key: secret, extra: { 'x-api-key': secret } } },
      },
      labels: {},
    };
    const [key] = await store.registerCells(run, [leaky]);
    await store.recordResult(key!, { ...outcome('', 'failed'), errorClass: 'auth', errorMessage: `bad key ${secret}` });
    const out = new PassThrough();
    const chunks: string[] = [];
    out.on('data', (chunk: Buffer) => chunks.push(chunk.toString('utf8')));
    await store.exportJsonl(run, out);
    const stored = JSON.stringify([await store.requireRun(run), await store.cellsOfRun(run)]);
    await store.close();

    expect(stored).not.toContain(secret);
    expect(stored).toContain('[redacted]');
    expect(chunks.join('')).not.toContain(secret);
    for (const suffix of ['', '-wal', '-shm']) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(file + suffix);
      } catch {
        continue;
      }
      expect(bytes.includes(Buffer.from(secret))).toBe(false);
    }
  });
});

describe('listRuns and the kept counts', () => {
  it('lists runs counted since the last change without joining every run cell, and counts again after a write', async () => {
    const store = SqliteRunStore.open(':memory:');
    const runId = await store.createRun(TEST_MANIFEST, { id: 'counted' });
    const [key] = await store.registerCells(runId, makeSpecs(3));
    const joins = () => all.mock.calls.filter(([sql]) => typeof sql === 'string' && sql.includes('GROUP BY rc.run_id, c.status')).length;
    const exec = (store as unknown as { exec: { all: (sql: string, params?: unknown[]) => Promise<unknown[]> } }).exec;
    const all = vi.spyOn(exec, 'all');
    expect((await store.getRun(runId))?.counts).toMatchObject({ pending: 3, total: 3 });
    expect((await store.listRuns()).map((r) => r.counts)).toEqual([{ pending: 3, done: 0, empty: 0, failed: 0, total: 3 }]);
    expect(joins()).toBe(0);
    await store.recordResult(key as string, outcome('x'));
    expect((await store.listRuns()).map((r) => r.counts)).toEqual([{ pending: 2, done: 1, empty: 0, failed: 0, total: 3 }]);
    expect(joins()).toBe(1);
    await store.close();
  });
});
