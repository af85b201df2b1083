import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { accountRun } from '../report/report.js';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { ZERO_USAGE } from '../models/types.js';
import { BLOB_MIN_CHARS, encodeRequest } from './blobs.js';
import { cellIdentity } from './keys.js';
import { requestKeys } from './request-hash.js';
import { SqliteRunStore } from './run-store.js';
import { SCHEMA_VERSION } from './schema.js';
import { TEST_MANIFEST, testOutcome } from './testing/fakes.js';
import type { CellSpec } from './types.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';
import { rewindSchema } from './testing/old-schema.js';

const tmp = useTempDir('echolens-blobs-', 'test');

const done = testOutcome({ text: 'answer', usage: { ...ZERO_USAGE, inputTokens: 3, outputTokens: 1 }, latencyMs: 1 });

/** A session-like prefix: one long rendered transcript and the acknowledgement turn that ends it. */
function prefix(seed: string, chars = 50_000): ChatMessage[] {
  const text = `${seed} ${'lorem ipsum "quoted" \\ tool output\n'.repeat(Math.ceil(chars / 36))}`.slice(0, chars);
  return [
    { role: 'user', content: text },
    { role: 'assistant', content: 'Understood.', cacheBreakpoint: true },
  ];
}

function cell(context: ChatMessage[], probe: string, model = 'fake:m', sample = 0, system = 'You are helpful.'): CellSpec {
  return {
    request: {
      model,
      messages: [{ role: 'system', content: system }, ...context, { role: 'user', content: probe }],
      params: { temperature: 0.7, maxTokens: 50 },
      sample,
    },
    labels: { probe, model, sample },
  };
}

/** The request as the old store wrote it: the full canonical JSON. */
const canonical = (request: ModelRequest) => JSON.parse(cellIdentity(request).json) as ModelRequest;

describe('incremental cell keys', () => {
  it('equal cellIdentity on long, short, tool and credential-bearing requests, cached or not', () => {
    const shared = prefix('A');
    const requests: ModelRequest[] = [
      cell(shared, 'who are you?').request,
      cell(shared, 'who are you?', 'fake:other', 3).request,
      { model: 'fake:m', messages: [{ role: 'user', content: 'short' }], params: {}, sample: 0 },
      {
        model: 'fake:m',
        messages: [...shared, { role: 'user', content: 'x'.repeat(BLOB_MIN_CHARS * 2) }],
        params: { providerOptions: { apiKey: 'sk-should-not-matter', extra: [1, 'two'] } },
        sample: 1,
        tools: [{ name: 'Read', inputSchema: { type: 'object' } }],
        toolChoice: 'auto',
      },
    ];
    for (let round = 0; round < 2; round += 1) {
      for (const request of requests) {
        const identity = cellIdentity(request);
        expect(requestKeys(request)).toEqual({ key: identity.key, contentKey: identity.contentKey });
      }
    }
  });

  it('notice a message list or message changed after it was hashed', () => {
    const messages = [...prefix('B'), { role: 'user' as const, content: 'probe one' }];
    const request: ModelRequest = { model: 'fake:m', messages, params: {}, sample: 0 };
    const before = requestKeys(request).key;
    messages[2] = { role: 'user', content: 'probe two' };
    expect(requestKeys(request).key).toBe(cellIdentity(request).key);
    expect(requestKeys(request).key).not.toBe(before);
    messages[0]!.content += ' edited';
    expect(requestKeys(request).key).toBe(cellIdentity(request).key);
  });
});

describe('content-addressed request storage', () => {
  it('round trip: a stored request reads back as the full canonical request', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'a.db'));
    const runId = await store.createRun(TEST_MANIFEST);
    const spec = cell(prefix('C'), 'describe yourself');
    const [key] = await store.registerCells(runId, [spec]);
    expect(await store.getRequest(key!)).toEqual(canonical(spec.request));
    expect((await store.cellsOfRun(runId))[0]!.request).toEqual(canonical(spec.request));
    const stored = store.db.prepare('SELECT request FROM cells WHERE key = ?').pluck().get(key) as string;
    expect(stored.length).toBeLessThan(1_000);
    expect(stored).toContain('"$blobs"');
    await store.close();
  });

  it('dedupe: cells sharing a prefix store it once; each cell adds well under 20 KB', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'b.db'));
    const runId = await store.createRun(TEST_MANIFEST);
    const shared = prefix('D', 320_000);
    const specs: CellSpec[] = [];
    for (const model of ['fake:a', 'fake:b', 'fake:c']) {
      for (const probe of ['one', 'two', 'three', 'four']) {
        specs.push(cell(shared, probe, model, 0), cell(shared, probe, model, 1, 'Another system prompt.'));
      }
    }
    const keys = await store.registerCells(runId, specs);
    expect(new Set(keys).size).toBe(specs.length);
    const blobBytes = store.db.prepare('SELECT sum(length(body)) FROM blobs').pluck().get() as number;
    // The long message once (as JSON), plus one small run blob per system prompt.
    const messageBytes = JSON.stringify(shared[0]!.content).length;
    expect(blobBytes).toBeGreaterThan(messageBytes);
    expect(blobBytes).toBeLessThan(messageBytes + 2 * 500);
    expect(store.db.prepare('SELECT count(*) FROM blobs WHERE length(body) > 10000').pluck().get()).toBe(1);
    const cellBytes = store.db.prepare('SELECT max(length(request)) FROM cells').pluck().get() as number;
    expect(cellBytes).toBeLessThan(20_000);
    for (const [index, spec] of specs.entries()) expect(await store.getRequest(keys[index]!)).toEqual(canonical(spec.request));
    await store.close();
  });

  it('deleting a run removes the blobs no remaining cell refers to, and keeps shared ones', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'c.db'));
    const first = await store.createRun(TEST_MANIFEST);
    const second = await store.createRun(TEST_MANIFEST);
    const shared = prefix('E');
    const own = prefix('F');
    const [sharedKey] = await store.registerCells(first, [cell(shared, 'p')]);
    await store.registerCells(second, [cell(shared, 'p'), cell(own, 'q')]);
    const count = () => store.db.prepare('SELECT count(*) FROM blobs').pluck().get() as number;
    expect(count()).toBe(4);
    await store.deleteRun(second);
    expect(count()).toBe(2);
    expect(await store.getRequest(sharedKey!)).toEqual(canonical(cell(shared, 'p').request));
    await store.close();
  });

  it('the stored form of a request without long parts is its canonical JSON', () => {
    const request: ModelRequest = { model: 'fake:m', messages: [{ role: 'user', content: 'hi' }], params: { temperature: 0 }, sample: 2 };
    const encoded = encodeRequest(request);
    expect(encoded.json).toBe(cellIdentity(request).json);
    expect(encoded.blobs.size).toBe(0);
  });
});

describe('store schema 3 and older stores', () => {
  /** A store as schema 2 wrote it: full request JSON in every cell, no blobs table. */
  async function makeV2Store(file: string, specs: CellSpec[]): Promise<{ runId: string; keys: string[] }> {
    const store = SqliteRunStore.open(file);
    const runId = await store.createRun(TEST_MANIFEST);
    const keys = await store.registerCells(runId, specs);
    await store.recordResult(keys[0]!, done);
    await store.close();
    rewindSchema(file, 2, 'DROP TABLE blobs', (db) => {
      const update = db.prepare('UPDATE cells SET request = ? WHERE key = ?');
      for (const [index, spec] of specs.entries()) update.run(cellIdentity(spec.request).json, keys[index]);
    });
    return { runId, keys };
  }

  it('a v2 store reads read-only without migrating, then migrates to v3 with its cells intact', async () => {
    const file = join(tmp.path, 'v2.db');
    const shared = prefix('G');
    const specs = [cell(shared, 'old one'), cell(shared, 'old two')];
    const { runId, keys } = await makeV2Store(file, specs);

    const reader = SqliteRunStore.open(file, { readonly: true });
    expect(await reader.getRequest(keys[0]!)).toEqual(canonical(specs[0]!.request));
    expect((await reader.cellsOfRun(runId)).map((c) => c.result.status)).toEqual(['done', 'pending']);
    await reader.close();

    const store = SqliteRunStore.open(file);
    expect(Number(store.db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get())).toBe(SCHEMA_VERSION);
    expect(await store.getRequest(keys[1]!)).toEqual(canonical(specs[1]!.request));
    // Registering the same plan again adds nothing; a new cell with the same prefix stores it as a blob.
    expect(await store.registerCells(runId, specs)).toEqual(keys);
    const [newKey] = await store.registerCells(runId, [cell(shared, 'new one')]);
    expect(store.db.prepare('SELECT count(*) FROM blobs').pluck().get()).toBe(2);
    expect(await store.getRequest(newKey!)).toEqual(canonical(cell(shared, 'new one').request));
    expect((await store.getCell(keys[0]!))!.text).toBe('answer');
    await store.close();
  });
});

describe('report reads without requests', () => {
  it('cellResultsOfRun and run accounting never read the request column', async () => {
    const file = join(tmp.path, 'r.db');
    const store = SqliteRunStore.open(file);
    const runId = await store.createRun(TEST_MANIFEST);
    const keys = await store.registerCells(runId, [cell(prefix('H'), 'a'), cell(prefix('H'), 'b', 'fake:n', 2)]);
    await store.recordResult(keys[0]!, done);
    // Requests that cannot be parsed: any read of them would throw.
    store.db.prepare("UPDATE cells SET request = 'not json'").run();
    const cells = await store.cellResultsOfRun(runId);
    expect(cells.map((c) => [c.labels.probe, c.model, c.sample, c.result.status, c.result.text])).toEqual([
      ['a', 'fake:m', 0, 'done', 'answer'],
      ['b', 'fake:n', 2, 'pending', null],
    ]);
    expect(await store.cellResultsOfRun(runId, { status: 'done' })).toHaveLength(1);
    expect((await accountRun(store, runId)).byStatus).toEqual({ done: 1, pending: 1 });
    await expect(store.cellsOfRun(runId)).rejects.toThrow();
    await store.close();
  });
});
