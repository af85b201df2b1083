import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { registerSimProfile } from '../models/sim-registry.js';
import { ZERO_USAGE } from '../models/types.js';
import { SqliteRunStore } from './run-store.js';
import { runCells } from './runner.js';
import { APPLICATION_ID, SCHEMA_VERSION } from './schema.js';
import { TEST_MANIFEST, testOutcome } from './testing/fakes.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

const tmp = useTempDir('echolens-toolcalls-', 'test');

registerSimProfile({
  name: 'test-tool-caller',
  description: 'simulation: always calls Read on the last user message (test only)',
  answer(request) {
    return { text: '', toolCalls: [{ id: 'c1', name: 'Read', input: { file_path: request.messages.at(-1)!.content } }] };
  },
});

describe('tool calls in the store', () => {
  it('a tool call without text is a done cell; its calls are stored and read back (also from cache)', async () => {
    const store = SqliteRunStore.open(join(tmp.path, 'run.db'));
    const runId = await store.createRun(TEST_MANIFEST);
    const spec = {
      request: {
        model: 'sim:test-tool-caller',
        messages: [{ role: 'user' as const, content: '/a/b.ts' }],
        params: {},
        sample: 0,
        tools: [{ name: 'Read', inputSchema: { type: 'object' } }],
      },
      labels: {},
    };
    const first = await runCells(store, runId, [spec]);
    expect(first.results[0]!.status).toBe('done');
    expect(first.results[0]!.toolCalls).toEqual([{ id: 'c1', name: 'Read', input: { file_path: '/a/b.ts' } }]);
    const again = await runCells(store, runId, [spec]);
    expect(again.results[0]!.cached).toBe(true);
    expect(again.results[0]!.toolCalls).toEqual(first.results[0]!.toolCalls);
    await store.close();
  });

  it('a version-1 store is migrated: the tool_calls column is added, old cells read without toolCalls', async () => {
    const file = join(tmp.path, 'old.db');
    const store = SqliteRunStore.open(file);
    const runId = await store.createRun(TEST_MANIFEST);
    const [key] = await store.registerCells(runId, [
      { request: { model: 'sim:echo', messages: [{ role: 'user', content: 'x' }], params: {}, sample: 0 }, labels: {} },
    ]);
    await store.recordResult(key!, testOutcome({ text: 'x', usage: { ...ZERO_USAGE }, latencyMs: 1, costUsd: null }));
    await store.close();
    // Turn it back into a version-1 file.
    const db = new Database(file);
    db.exec('ALTER TABLE cells DROP COLUMN tool_calls');
    db.prepare("UPDATE meta SET value = '1' WHERE name = 'schema_version'").run();
    expect(db.pragma('application_id', { simple: true })).toBe(APPLICATION_ID);
    db.close();
    const reopened = SqliteRunStore.open(file);
    expect(Number(reopened.db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get())).toBe(SCHEMA_VERSION);
    const cell = (await reopened.getCell(key!))!;
    expect(cell.text).toBe('x');
    expect(cell.toolCalls).toBeUndefined();
    await reopened.close();
  });
});
