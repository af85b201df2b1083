import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ModelCallError } from '../models/errors.js';
import { createReplayAdapter } from './replay.js';
import { SqliteRunStore } from './run-store.js';
import { runCells } from './runner.js';
import { answerFor, FakeModels, makeSpecs, TEST_MANIFEST } from './testing/fakes.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

const tmp = useTempDir('echolens-replay-', 'test');

async function recordRun(file: string, model: string, n: number) {
  const store = SqliteRunStore.open(file);
  const runId = await store.createRun(TEST_MANIFEST);
  const models = new FakeModels();
  await runCells(store, runId, makeSpecs(n, model), { adapterFor: models.adapterFor });
  await store.close();
}

describe('replay adapter', () => {
  it('answers a new run from an earlier store, whatever model answered there', async () => {
    const source = join(tmp.path, 'source.db');
    await recordRun(source, 'openai:gpt-x', 6);
    const ref = `replay:${source}`;
    const store = SqliteRunStore.open(join(tmp.path, 'replayed.db'));
    const runId = await store.createRun(TEST_MANIFEST);
    const summary = await runCells(store, runId, makeSpecs(6, ref), { adapterFor: createReplayAdapter });
    expect(summary).toMatchObject({ done: 6, failed: 0 });
    // The original answers (computed from the original model's requests) come back unchanged.
    expect(summary.results.map((r) => r.text)).toEqual(makeSpecs(6, 'openai:gpt-x').map((s) => answerFor(s.request)));
    const exported = await store.cellsOfRun(runId);
    expect(exported.every((cell) => cell.request.model === ref)).toBe(true);
    expect(store.db.prepare('SELECT DISTINCT response_model FROM cells').pluck().all()).toEqual(['openai:gpt-x']);
    await store.close();
  });

  it('says clearly when a cell is not in the store', async () => {
    const source = join(tmp.path, 'source.db');
    await recordRun(source, 'openai:gpt-x', 2);
    const adapter = createReplayAdapter(`replay:${source}`);
    const other = makeSpecs(3, adapter.ref)[2]!.request;
    const error = await adapter.generate(other).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ModelCallError);
    expect((error as ModelCallError).kind).toBe('not_found');
    expect((error as Error).message).toContain(`cell not in replay store ${source}`);
  });

  it('asks to choose when several models answered the same content, and honours #model', async () => {
    const source = join(tmp.path, 'source.db');
    await recordRun(source, 'a:one', 1);
    await recordRun(source, 'b:two', 1);
    const request = makeSpecs(1, 'replay:x')[0]!.request;
    const ambiguous = await createReplayAdapter(`replay:${source}`)
      .generate(request)
      .catch((e: unknown) => e);
    expect((ambiguous as ModelCallError).kind).toBe('config');
    expect((ambiguous as Error).message).toMatch(/from 2 models \(.*a:one.*b:two.*\)/);
    const chosen = await createReplayAdapter(`replay:${source}#b:two`).generate(request);
    expect(chosen.responseModel).toBe('b:two');
    expect(chosen.text).toBe(answerFor(makeSpecs(1, 'b:two')[0]!.request));
  });

  it('rejects malformed references and missing stores up front', () => {
    expect(() => createReplayAdapter('openai:x')).toThrow(/not a replay reference/);
    expect(() => createReplayAdapter('replay:')).toThrow(/needs a store path/);
    expect(() => createReplayAdapter(`replay:${join(tmp.path, 'missing.db')}`)).toThrow(/replay store not found/);
  });
});
