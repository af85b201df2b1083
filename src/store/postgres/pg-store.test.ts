import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../../core/errors.js';
import { ModelCallError } from '../../models/errors.js';
import { type GenerateOptions, type ModelRequest, ZERO_USAGE } from '../../models/types.js';
import { cellKey, contentKey } from '../keys.js';
import { type CellOutcome, openStore, type RunStore, SqliteRunStore } from '../run-store.js';
import { runCells } from '../runner.js';
import type { ProgressSnapshot } from '../runner-types.js';
import { FakeModels, fakeResponse, makeSpecs, TEST_MANIFEST, usageFor } from '../testing/fakes.js';
import { COST_PER_CALL, expectHostileRoundTrip, runHostile } from '../testing/hostile-text.js';
import type { CellSpec } from '../types.js';
import { PgRunStore } from './pg-store.js';
import { PG_SCHEMA_VERSION } from './schema.js';
import { transferRuns } from './transfer.js';
import { workCells } from '../../execution/worker.js';
import { postgresForTests, startTestCluster, type TestCluster } from './testing/cluster.js';

// The PostgreSQL backend against the SQLite one: the same script of store operations must
// give the same answers on both (timestamps the store itself takes aside).

const SECRET = 'sk-test-secret-value-0123456789';
const ENV = { OPENAI_API_KEY: SECRET };
const LONG = `You are a careful assistant. ${'Context sentence. '.repeat(400)}`;

function specs(): CellSpec[] {
  const base = (i: number, extra: Record<string, unknown> = {}) => ({
    model: i % 2 === 0 ? 'fake:a' : 'fake:b',
    messages: [
      { role: 'system' as const, content: LONG, cacheBreakpoint: true },
      { role: 'user' as const, content: `Question ${i} (key ${i === 3 ? SECRET : 'none'})` },
    ],
    params: { temperature: 0, maxTokens: 32, ...extra },
    sample: 0,
  });
  return [
    { request: base(0), labels: { arm: 'a', flag: true, n: 1 } },
    { request: base(1), labels: { arm: 'b', flag: false, n: 2 } },
    { request: base(2), labels: { arm: 'a', flag: true, n: 3, note: null } },
    { request: base(3), labels: { arm: 'b', flag: false, n: 4 } },
    // The same call under other labels (linked twice), and an exact repeat (linked once).
    { request: base(0), labels: { arm: 'c', flag: true, n: 5 } },
    { request: base(1), labels: { arm: 'b', flag: false, n: 2 } },
    { request: { ...base(4), messages: [{ role: 'user' as const, content: 'short' }] }, labels: { arm: 'a', flag: 1, n: 6 } },
  ];
}

function outcome(text: string | null, status: CellOutcome['status'], extra: Partial<CellOutcome> = {}): CellOutcome {
  return {
    status,
    attempts: 2,
    text,
    reasoning: status === 'done' ? 'thought' : null,
    finishReason: status === 'done' ? 'stop' : null,
    responseModel: 'fake-1',
    usage: { ...ZERO_USAGE, inputTokens: 11, outputTokens: 3 },
    latencyMs: 12.5,
    costUsd: 0.000123,
    errorClass: status === 'failed' ? 'server' : null,
    errorMessage: status === 'failed' ? `boom ${SECRET}` : null,
    startedAt: '2026-01-01T00:00:00.000Z',
    finishedAt: '2026-01-01T00:00:01.000Z',
    ...extra,
  };
}

/** Drops what the store stamps itself (run times) and where it lives. */
function stable(value: unknown): unknown {
  return JSON.parse(
    JSON.stringify(value, (key, v) => (['startedAt', 'updatedAt', 'endedAt', 'wallMs', 'elapsedMs'].includes(key) && typeof v === 'string' ? '<time>' : v)),
  );
}

async function script(store: RunStore): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  await store.createRun({ ...TEST_MANIFEST, config: { key: SECRET } }, { id: 'r1' });
  await store.createRun(TEST_MANIFEST, { id: 'r2' });
  out.duplicateRun = await (async () => {
    try {
      await store.createRun(TEST_MANIFEST, { id: 'r1' });
      return 'created';
    } catch (error) {
      return (error as Error).name;
    }
  })();
  const plan = specs();
  const keys = await store.registerCells('r1', plan);
  out.keys = keys;
  out.again = await store.registerCells('r1', plan);
  await store.registerCells('r2', plan.slice(0, 2));
  out.written = await store.recordResults([
    { key: keys[0]!, outcome: outcome('zero', 'done', { toolCalls: [{ id: 't1', name: 'lookup', input: { q: SECRET } }] }) },
    { key: keys[1]!, outcome: outcome('one', 'done') },
    { key: keys[2]!, outcome: outcome(null, 'failed') },
    { key: keys[3]!, outcome: outcome('', 'empty') },
  ]);
  out.doneIsFinal = await store.recordResult(keys[0]!, outcome('overwrite', 'done'));
  out.failedAgain = await store.recordResult(keys[2]!, outcome(null, 'failed', { attempts: 3 }));
  await expect(store.recordResult('f'.repeat(64), outcome('x', 'done'))).rejects.toThrow(InvalidArgumentError);
  out.run = await store.getRun('r1');
  out.runs = (await store.listRuns()).map((r) => ({ id: r.id, counts: r.counts, status: r.status }));
  out.cells = [...(await store.getCells([keys[3]!, keys[0]!, 'missing', keys[6]!])).entries()];
  out.results = [...(await store.resultsOfRun('r1')).entries()].sort();
  out.getCell = await store.getCell(keys[1]!);
  out.request = await store.getRequest(keys[3]!);
  out.cellsOfRun = await store.cellsOfRun('r1');
  out.byArm = (await store.cellResultsOfRun('r1', { labels: { arm: 'a' } })).map((c) => c.labels);
  out.byFlag = (await store.cellResultsOfRun('r1', { labels: { flag: true } })).map((c) => c.labels);
  out.byNull = (await store.cellResultsOfRun('r1', { labels: { note: null, arm: 'a' } })).map((c) => c.labels);
  out.byStatus = (await store.cellResultsOfRun('r1', { status: ['done', 'failed'] })).map((c) => [c.key, c.ordinal]);
  out.index = await store.cellIndexOfRun('r1');
  out.byContent = await store.findByContent(contentKey(plan[0]!.request));
  out.byContentModel = await store.findByContent(contentKey(plan[1]!.request), 'fake:a');
  let jsonl = '';
  out.lines = await store.exportJsonl(
    'r1',
    new Writable({
      write(chunk, _encoding, done) {
        jsonl += chunk.toString();
        done();
      },
    }),
  );
  out.jsonl = jsonl.split('\n');
  const jobs = store.batchJobs();
  const job = await jobs.begin('r1', 'openai', 'openai:gpt', [keys[1]!, keys[0]!], new Date('2026-01-02T00:00:00Z'));
  await jobs.submitted(job, 'batch_1');
  await jobs.observed(job, 'in_progress', '{"done":1}');
  out.openJobs = await jobs.open();
  await jobs.finish(job, 'collected', undefined, new Date('2026-01-02T01:00:00Z'));
  out.jobs = await jobs.all('r1');
  out.rollback = await (async () => {
    try {
      await store.transaction(async () => {
        await store.createRun(TEST_MANIFEST, { id: 'r3' });
        throw new Error('undo');
      });
    } catch {
      // expected
    }
    return (await store.getRun('r3')) === undefined;
  })();
  await store.setRunStatus('r1', 'done', { finished: true, note: SECRET });
  out.finalRun = await store.getRun('r1');
  out.deleteR2 = await store.deleteRun('r2');
  out.afterR2 = (await store.getCells(keys)).size;
  out.requestAfter = await store.getRequest(keys[0]!);
  out.deleteR1 = await store.deleteRun('r1');
  out.runsLeft = (await store.listRuns()).length;
  return stable(out) as Record<string, unknown>;
}

const bin = postgresForTests();

describe.skipIf(bin === null)('PostgreSQL run store', () => {
  let cluster: TestCluster;
  let count = 0;
  let dir: string;
  const freshUrl = () => cluster.createDatabase(`store_${++count}`);
  beforeAll(async () => {
    cluster = await startTestCluster(bin!);
    dir = mkdtempSync(join(tmpdir(), 'echolens-pgtest-'));
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });
  /** The same work on a new SQLite file and a new PostgreSQL database (each closed after it), SQLite's result first. */
  const onBothBackends = async <T>(name: string, work: (store: RunStore) => Promise<T>, env?: Record<string, string>, checkPg?: (pg: RunStore) => void) => {
    const sqlite = SqliteRunStore.open(join(dir, `${name}.db`), env === undefined ? {} : { env });
    const pg = openStore(freshUrl(), env === undefined ? {} : { env });
    checkPg?.(pg);
    try {
      return [await work(sqlite), await work(pg)] as const;
    } finally {
      await sqlite.close();
      await pg.close();
    }
  };

  it('answers the same store script as the SQLite backend, secrets scrubbed on both', async () => {
    const [a, b] = await onBothBackends('script', script, ENV, (pg) => {
      expect(pg).toBeInstanceOf(PgRunStore);
      expect(pg.backend).toBe('postgres');
    });
    expect(JSON.stringify(a)).not.toContain(SECRET);
    expect(JSON.stringify(b)).not.toContain(SECRET);
    for (const key of Object.keys(a)) expect({ [key]: b[key] }).toEqual({ [key]: a[key] });
    // Sanity of the script itself: it exercised what it claims.
    expect(a.doneIsFinal).toBe(false);
    expect((a.cellsOfRun as unknown[]).length).toBe(6);
    expect((a.byFlag as unknown[]).length).toBe(4); // true and 1 both read as 1, as json_extract does
    expect(a.deleteR1).toEqual({ cellsRemoved: 5 });
  });

  it('refuses a foreign or newer schema and opens read-only without creating one', async () => {
    const url = freshUrl();
    await expect(PgRunStore.connect(url, { readonly: true })).rejects.toThrow(/not an echolens run store/);
    const store = PgRunStore.open(url);
    await store.client.query("UPDATE meta SET value = '99' WHERE name = 'schema_version'");
    await store.close();
    await expect(PgRunStore.connect(url)).rejects.toThrow(/schema version 99 is newer/);
    // A store opened without waiting fails its first call with the same reason.
    const lazy = openStore(url);
    await expect(lazy.listRuns()).rejects.toThrow(/schema version 99 is newer/);
    await lazy.close();
  });

  it('migrates a schema-1 store (no open_attempts) to the current version', async () => {
    const url = freshUrl();
    const store = PgRunStore.open(url);
    await store.client.query("ALTER TABLE cells DROP COLUMN open_attempts; UPDATE meta SET value = '1' WHERE name = 'schema_version'");
    await store.close();
    await expect(PgRunStore.connect(url, { readonly: true })).rejects.toThrow(/needs a migration/);
    const reopened = PgRunStore.open(url);
    expect((await reopened.client.query("SELECT value FROM meta WHERE name = 'schema_version'")).rows[0]?.value).toBe(String(PG_SCHEMA_VERSION));
    expect(
      (
        await reopened.client.query(
          "SELECT 1 FROM information_schema.columns WHERE table_schema = 'echolens' AND table_name = 'cells' AND column_name = 'open_attempts'",
        )
      ).rowCount,
    ).toBe(1);
    await reopened.close();
  });

  it('keeps the password out of the location it shows', async () => {
    const url = cluster.url.replace('postgres@', 'postgres:hunter2@');
    const store = openStore(url);
    expect(store.file).not.toContain('hunter2');
    expect(store.file).toContain('***');
    await store.close();
  });

  it('runCells on PostgreSQL gives the results runCells gives on SQLite, and a resume calls nothing', async () => {
    const plan = [...makeSpecs(30), ...makeSpecs(5)];
    const run = async (store: RunStore) => {
      // Answers keyed by the cell key: a request read back from the store is the same call.
      const models = new FakeModels({ delayMs: 2, respond: (request) => fakeResponse(`answer ${cellKey(request).slice(0, 16)}`, usageFor(request)) });
      const id = await store.createRun(TEST_MANIFEST, { id: 'grid' });
      const result = await runCells(store, id, plan, { adapterFor: models.adapterFor, costOf: () => 0.001, concurrency: 4 });
      const again = await runCells(store, id, plan, { adapterFor: models.adapterFor, costOf: () => 0.001 });
      return { result, again, calls: models.totalCalls, cells: await store.cellResultsOfRun(id) };
    };
    const [a, b] = await onBothBackends('grid', run);
    expect(b.calls).toBe(30);
    expect(a.calls).toBe(30);
    const strip = (cells: typeof a.cells) => cells.map((c) => ({ ...c, result: { ...c.result, latencyMs: null, startedAt: null, finishedAt: null } }));
    expect(strip(b.cells)).toEqual(strip(a.cells));
    expect(b.result.status).toBe('done');
    expect(b.result.done).toBe(30);
    expect(b.again.done).toBe(0);
    expect(b.again.cached).toBe(30);
    expect(b.result.results.map((r) => r.text)).toEqual(a.result.results.map((r) => r.text));
    expect(b.result.spendUsd).toBeCloseTo(a.result.spendUsd, 9);
  });

  it('runs export/import: SQLite → PostgreSQL → SQLite keeps runs, plans, labels, results and times', async () => {
    const file = join(dir, 'source.db');
    const source = SqliteRunStore.open(file);
    const models = new FakeModels();
    const plan = makeSpecs(12);
    const id = await source.createRun(TEST_MANIFEST, { id: 'moved' });
    await runCells(source, id, plan.slice(0, 8), { adapterFor: models.adapterFor, costOf: () => 0.01 });
    await source.registerCells(id, plan.slice(8)); // four cells left pending
    const url = freshUrl();
    const pg = openStore(url);
    const copied = await transferRuns(source, pg);
    expect(copied.runs).toEqual([{ id: 'moved', cells: 12, results: 8, skipped: false }]);
    await expect(transferRuns(source, pg)).rejects.toThrow(/already in/);
    const back = SqliteRunStore.open(join(dir, 'back.db'));
    await transferRuns(pg, back);
    for (const store of [pg, back]) {
      expect(await store.getRun(id)).toEqual(await source.getRun(id));
      expect(await store.cellsOfRun(id)).toEqual(await source.cellsOfRun(id));
    }
    const responseModel = (store: SqliteRunStore) => store.db.prepare('SELECT key, response_model FROM cells ORDER BY key').all();
    expect(responseModel(back)).toEqual(responseModel(source));
    for (const store of [source, pg, back]) await store.close();
  });

  it('--max-cost on PostgreSQL stops where SQLite stops, from the spend in the store', async () => {
    const plan = makeSpecs(12);
    const run = async (store: RunStore) => {
      const models = new FakeModels();
      const id = await store.createRun(TEST_MANIFEST, { id: 'budget' });
      const result = await runCells(store, id, plan, { adapterFor: models.adapterFor, costOf: () => 0.01, maxCostUsd: 0.05, concurrency: 1 });
      return { status: result.status, stopReason: result.stopReason, done: result.done, calls: models.totalCalls };
    };
    const [a, b] = await onBothBackends('budget', run);
    expect(a).toEqual({ status: 'stopped', stopReason: 'budget', done: 5, calls: 5 });
    expect(b).toEqual(a);
  });

  it('rate buckets are shared between connections (one bucket, whoever takes)', async () => {
    const url = freshUrl();
    const one = PgRunStore.open(url);
    const two = PgRunStore.open(url);
    // 600/min: a capacity of 100 (10 s of rate), refilled at 10 per second.
    let taken = 0;
    const start = Date.now();
    for (let i = 0; i < 60; i += 1) if ((await one.shared.takeRate('requests:x', 600, 1)) === 0) taken += 1;
    for (let i = 0; i < 60; i += 1) if ((await two.shared.takeRate('requests:x', 600, 1)) === 0) taken += 1;
    const refill = Math.ceil((Date.now() - start) / 100) + 1; // 10 per second while the loops ran
    expect(taken).toBeGreaterThanOrEqual(100);
    expect(taken).toBeLessThanOrEqual(100 + refill);
    expect(taken).toBeLessThan(120);
    const wait = await two.shared.takeRate('requests:x', 600, 1);
    expect(wait).toBeGreaterThan(0);
    expect(wait).toBeLessThanOrEqual(100);
    await one.close();
    await two.close();
  });

  it('a SIGKILLed holder leaves cells that come back when its lease lapses; a claim takes a whole prefix group', async () => {
    const url = freshUrl();
    const store = PgRunStore.open(url);
    const id = await store.createRun(TEST_MANIFEST, { id: 'leases' });
    const grouped = Array.from({ length: 3 }, (_, i) => ({
      request: {
        model: 'fake:m',
        messages: [
          { role: 'system' as const, content: LONG, cacheBreakpoint: true },
          { role: 'user' as const, content: `q${i}` },
        ],
        params: {},
        sample: 0,
      },
      labels: { i },
    }));
    await store.registerCells(id, [...makeSpecs(4), ...grouped]);
    const first = await store.shared.claim('dead-worker', { max: 10, leaseMs: 300 });
    expect(first.length).toBe(3);
    expect(new Set(first.map((c) => c.group)).size).toBe(1);
    expect(first[0]!.group).not.toBeNull();
    const second = await store.shared.claim('live-worker', { max: 10, leaseMs: 30_000 });
    expect(second.map((c) => c.key).sort()).toEqual(
      (await store.cellResultsOfRun(id))
        .slice(0, 4)
        .map((c) => c.key)
        .sort(),
    );
    expect(await store.shared.claim('live-worker', { max: 10, leaseMs: 30_000 })).toEqual([]);
    await new Promise((resolve) => setTimeout(resolve, 400));
    const back = await store.shared.claim('live-worker', { max: 10, leaseMs: 30_000 });
    expect(back.map((c) => c.key).sort()).toEqual(first.map((c) => c.key).sort());
    expect(await store.shared.openWork(id)).toEqual({ pending: 7, leased: 7 });
    await store.close();
  });

  it('answers holding NUL and lone surrogates round-trip on PostgreSQL, one call per cell, spend counted', async () => {
    const store = openStore(freshUrl()) as PgRunStore;
    const { runId, result, calls, plan } = await runHostile(store, { cells: 27, id: 'hostile' });
    expect(result.status).toBe('done');
    expect(result.done).toBe(27);
    expect(calls).toBe(27);
    expect(result.spendUsd).toBeCloseTo(27 * COST_PER_CALL, 9);
    expect(await store.shared.spentOf(runId)).toBeCloseTo(27 * COST_PER_CALL, 9);
    await expectHostileRoundTrip(store, runId, plan);
    await store.close();
  });

  it('an answer PostgreSQL refuses fails its cell with a storage error once; the spend counts for --max-cost', async () => {
    const store = openStore(freshUrl()) as PgRunStore;
    await store.client.query("ALTER TABLE cells ADD CONSTRAINT refuse_poison CHECK (text IS NULL OR position('POISON' in text) = 0)");
    const poison = (index: number) => index % 3 === 1;
    // Results are written in group statements that may settle out of order (a refused one takes
    // three round trips), so three refused cells can finish back to back: no fatal-burst stop here.
    const { runId, result, calls } = await runHostile(store, { cells: 12, id: 'refused', poison, concurrency: 1, fatalBurst: 100 });
    expect(calls).toBe(12);
    expect(result.done).toBe(8);
    expect(result.failed).toBe(4);
    expect(await store.shared.spentOf(runId)).toBeCloseTo(12 * COST_PER_CALL, 9);
    for (const cell of await store.cellResultsOfRun(runId)) {
      if (!poison(cell.labels.index as number)) continue;
      expect(cell.result.status).toBe('failed');
      expect(cell.result.errorMessage).toMatch(/^storage: the answer of this call could not be stored \(.*refuse_poison/);
      expect(cell.result.attempts).toBe(1);
      expect(cell.result.costUsd).toBeCloseTo(COST_PER_CALL, 9);
    }
    await store.close();
  });

  it('runs import of a SQLite store whose answers hold NUL and lone surrogates into PostgreSQL and back', async () => {
    const source = SqliteRunStore.open(join(dir, 'hostile-source.db'));
    const { runId, plan } = await runHostile(source, { cells: 18, id: 'hostile-moved' });
    const pg = openStore(freshUrl());
    expect((await transferRuns(source, pg)).runs).toEqual([{ id: runId, cells: 18, results: 18, skipped: false }]);
    await expectHostileRoundTrip(pg, runId, plan);
    expect(await pg.cellsOfRun(runId)).toEqual(await source.cellsOfRun(runId));
    const back = SqliteRunStore.open(join(dir, 'hostile-back.db'));
    await transferRuns(pg, back);
    expect(await back.cellsOfRun(runId)).toEqual(await source.cellsOfRun(runId));
    await expectHostileRoundTrip(back, runId, plan);
    for (const store of [source, pg, back]) await store.close();
  });

  it('a lease of this process that lapsed while its call was in flight is claimed back, not called a second time', async () => {
    const store = PgRunStore.open(freshUrl());
    const id = await store.createRun(TEST_MANIFEST, { id: 'lapsed' });
    await store.registerCells(id, makeSpecs(12));
    const models = new FakeModels({
      respond: async (request) => {
        // A renewal late under load: every lease lapses while the calls are in flight.
        await store.client.query("UPDATE cells SET lease_until = now() - interval '1 second' WHERE lease_owner IS NOT NULL");
        await new Promise((resolve) => setTimeout(resolve, 60));
        return fakeResponse('ok', usageFor(request));
      },
    });
    const result = await workCells(store, { runId: id, adapterFor: models.adapterFor, costOf: () => 0, concurrency: 2, claimMax: 2, pollMs: 20 });
    expect(result.done).toBe(12);
    expect(models.totalCalls).toBe(12);
    expect([...models.calls.values()].every((calls) => calls === 1)).toBe(true);
    await store.close();
  });

  it('counts attempts before the call; a cell whose calls keep ending unrecorded is failed, not called again', async () => {
    const store = PgRunStore.open(freshUrl());
    const id = await store.createRun(TEST_MANIFEST, { id: 'unsettled' });
    await store.registerCells(id, makeSpecs(4));
    // Three workers in turn claim cells, count the call as sent, and die (their leases lapse).
    for (const max of [4, 4, 2]) {
      const claimed = await store.shared.claim(`dead-${max}-${Math.random()}`, { max, leaseMs: 100 });
      await store.beginAttempts(claimed.map((c) => c.key));
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    const seen: number[] = [];
    const models = new FakeModels({
      respond: async (request) => {
        seen.push((await store.getCell(cellKey(request)))!.attempts);
        return fakeResponse('ok', usageFor(request));
      },
    });
    const result = await workCells(store, { runId: id, adapterFor: models.adapterFor, costOf: () => 0.001, retry: { maxAttempts: 3 }, pollMs: 50 });
    const cells = await store.cellResultsOfRun(id);
    const failed = cells.filter((c) => c.result.status === 'failed');
    expect(failed.length).toBe(2);
    for (const cell of failed) {
      expect(cell.result.errorMessage).toBe(
        'storage: 3 calls of this cell ended without a stored result (the worker was killed or the result could not be written); not called again',
      );
      expect(cell.result.attempts).toBe(3);
    }
    // The other two had 2 unsettled calls: called once more (counted before it was sent), and done.
    expect(models.totalCalls).toBe(2);
    expect(seen).toEqual([3, 3]);
    expect(result.done).toBe(2);
    expect(cells.filter((c) => c.result.status === 'done').map((c) => c.result.attempts)).toEqual([3, 3]);
    await store.close();
  });

  it('per-provider concurrency holds on PostgreSQL as on SQLite', async () => {
    const specs = [...makeSpecs(30, 'alpha:m'), ...makeSpecs(30, 'beta:m')];
    const run = async (store: RunStore) => {
      const models = new FakeModels({ delayMs: 15 });
      const id = await store.createRun(TEST_MANIFEST, { id: 'lanes' });
      const result = await runCells(store, id, specs, { adapterFor: models.adapterFor, costOf: () => 0, concurrency: { alpha: 3, '*': 2 } });
      return { done: result.done, alpha: models.maxActiveByProvider.get('alpha'), beta: models.maxActiveByProvider.get('beta'), calls: models.totalCalls };
    };
    const [a, b] = await onBothBackends('lanes', run);
    expect(a).toEqual({ done: 60, alpha: 3, beta: 2, calls: 60 });
    expect(b).toEqual(a);
  });

  it('progress (done, failed, in flight) and the cache lifetime on PostgreSQL as on SQLite', async () => {
    const plan = makeSpecs(12);
    const failing = new Set(plan.filter((_, i) => i % 4 === 0).map((spec) => cellKey(spec.request)));
    const run = async (store: RunStore) => {
      const models = new FakeModels({
        // Unequal latencies: when one call ends, the other is still in flight.
        delayMs: (request) => (Number(request.messages[1]!.content.match(/\d+/)![0]) % 2 === 0 ? 2 : 40),
        respond: (request) => {
          if (failing.has(cellKey(request))) throw new ModelCallError('bad_request', 'refused by the fake model');
          return fakeResponse('ok', usageFor(request));
        },
      });
      const ttls: unknown[] = [];
      const adapterFor = (ref: string) => {
        const adapter = models.adapterFor(ref);
        return {
          ...adapter,
          generate: (request: ModelRequest, generateOptions?: GenerateOptions) => {
            ttls.push(generateOptions?.cacheTtl);
            return adapter.generate(request);
          },
        };
      };
      let maxInFlight = 0;
      let last: ProgressSnapshot | undefined;
      const id = await store.createRun(TEST_MANIFEST, { id: 'progress' });
      await runCells(store, id, plan, {
        adapterFor,
        costOf: () => 0,
        concurrency: 2,
        // Completion order varies with load; three planned failures may finish back to back.
        fatalBurst: 100,
        cache: { cacheTtl: '1h' },
        onProgress: (snapshot) => {
          maxInFlight = Math.max(maxInFlight, snapshot.inFlight);
          last = snapshot;
        },
      });
      return {
        ttls: [...new Set(ttls)],
        maxInFlight,
        last: { done: last!.done, failed: last!.failed, empty: last!.empty, finished: last!.finished, inFlight: last!.inFlight },
      };
    };
    const [a, b] = await onBothBackends('progress', run);
    expect(a.ttls).toEqual(['1h']);
    expect(a.last).toEqual({ done: 9, failed: 3, empty: 0, finished: 12, inFlight: 0 });
    expect(a.maxInFlight).toBeGreaterThanOrEqual(1);
    expect(b.maxInFlight).toBeGreaterThanOrEqual(1);
    expect(b.maxInFlight).toBeLessThanOrEqual(2);
    expect({ ...b, maxInFlight: 0 }).toEqual({ ...a, maxInFlight: 0 });
  });

  // 8 prefix groups of 12 cells (a group fits in a claim), and 3 of 40 (claimed in parts of at most 16).
  it.each([
    { groups: 8, probes: 12 },
    { groups: 3, probes: 40 },
  ])(
    'a cache-heavy grid ($groups groups of $probes) worked by two processes on PostgreSQL bills the cache reads of the same grid run locally (within 5 %)',
    async ({ groups, probes }) => {
      // A fake prompt cache: a call reads a prefix when a call that wrote it had answered before it started.
      const PREFIX_TOKENS = 1_000;
      const plan: CellSpec[] = [];
      for (let group = 0; group < groups; group += 1) {
        for (let probe = 0; probe < probes; probe += 1) {
          plan.push({
            request: {
              model: 'fake:m',
              messages: [
                { role: 'system' as const, content: `Group ${group}. ${LONG}`, cacheBreakpoint: true },
                { role: 'user' as const, content: `probe ${probe}` },
              ],
              params: { maxTokens: 16 },
              sample: 0,
            },
            labels: { group, probe },
          });
        }
      }
      const cachingModels = () => {
        const warm = new Set<string>();
        return new FakeModels({
          respond: async (request) => {
            const prefix = String(request.messages[0]!.content);
            const hit = warm.has(prefix);
            // A miss (writing the cache) takes longer than a hit, as with real providers.
            await new Promise((resolve) => setTimeout(resolve, hit ? 5 : 40));
            warm.add(prefix);
            return fakeResponse('ok', {
              ...ZERO_USAGE,
              inputTokens: PREFIX_TOKENS + 10,
              outputTokens: 2,
              ...(hit ? { cachedInputTokens: PREFIX_TOKENS } : { cacheWriteTokens: PREFIX_TOKENS }),
            });
          },
        });
      };
      const cacheReads = async (store: RunStore, id: string) =>
        (await store.cellResultsOfRun(id)).reduce((sum, cell) => sum + cell.result.usage.cachedInputTokens, 0);

      const sqlite = SqliteRunStore.open(join(dir, `cache-grid-${groups}.db`));
      const localId = await sqlite.createRun(TEST_MANIFEST, { id: `cache-grid-${groups}` });
      await runCells(sqlite, localId, plan, { adapterFor: cachingModels().adapterFor, costOf: () => 0, concurrency: 8 });
      const local = await cacheReads(sqlite, localId);
      await sqlite.close();

      const url = freshUrl();
      const pg = openStore(url);
      const helper = await PgRunStore.connect(url);
      const id = await pg.createRun(TEST_MANIFEST, { id: `cache-grid-${groups}` });
      // One provider cache for both processes (one account), as in a real team.
      const models = cachingModels();
      const stop = new AbortController();
      const [result] = await Promise.all([
        runCells(pg, id, plan, { adapterFor: models.adapterFor, costOf: () => 0, concurrency: 8 }).finally(() => stop.abort()),
        workCells(helper, { adapterFor: models.adapterFor, costOf: () => 0, concurrency: 8, pollMs: 20, signal: stop.signal }),
      ]);
      const shared = await cacheReads(pg, id);
      await helper.close();
      await pg.close();
      const cells = groups * probes;
      expect(result.done).toBe(cells);
      expect(models.totalCalls).toBe(cells);
      // Locally every group misses once: its leader writes, its followers read.
      expect(local).toBe((cells - groups) * PREFIX_TOKENS);
      expect(Math.abs(shared - local) / local).toBeLessThanOrEqual(0.05);
    },
  );

  it('a transaction holds its own connection: calls inside join it, calls outside go on and see it only once committed', async () => {
    const store = await PgRunStore.connect(freshUrl());
    let open!: () => void;
    const opened = new Promise<void>((resolve) => {
      open = resolve;
    });
    let finish!: () => void;
    const finishing = new Promise<void>((resolve) => {
      finish = resolve;
    });
    const tx = store.transaction(async () => {
      await store.createRun(TEST_MANIFEST, { id: 'inside' });
      // Inside the transaction (its async context) the uncommitted run is there.
      expect((await store.getRun('inside'))?.id).toBe('inside');
      open();
      await finishing;
      await store.transaction(async () => {
        await store.createRun(TEST_MANIFEST, { id: 'nested' }); // a savepoint
      });
    });
    await opened;
    // The test's own context is outside the transaction: its calls are not blocked and do not see it.
    expect(await store.listRuns()).toEqual([]);
    expect(await store.getRun('inside')).toBeUndefined();
    finish();
    await tx;
    expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['inside', 'nested']);
    await expect(
      store.transaction(async () => {
        await store.createRun(TEST_MANIFEST, { id: 'undone' });
        throw new Error('undo');
      }),
    ).rejects.toThrow('undo');
    expect((await store.listRuns()).map((r) => r.id).sort()).toEqual(['inside', 'nested']);
    await store.close();
  });
});
