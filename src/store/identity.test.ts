import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../models/types.js';
import { cellIdentity, cellKey, identityModel } from './keys.js';
import { RunStore } from './run-store.js';
import { runCells } from './runner.js';
import { FakeModels, makeSpecs, TEST_MANIFEST } from './testing/fakes.js';
import type { CellSpec } from './types.js';

/** The key rule before identity left the base URL out, written out independently: SHA-256 of the sorted JSON with the whole reference. */
function oldRuleKey(request: ModelRequest): string {
  const json = `{"messages":${JSON.stringify(request.messages.map((m) => ({ content: m.content, role: m.role })))},"model":${JSON.stringify(request.model)},"params":${JSON.stringify(
    Object.fromEntries(Object.entries(request.params).sort(([a], [b]) => a.localeCompare(b))),
  )},"sample":${request.sample}}`;
  return createHash('sha256').update(json).digest('hex');
}

const onPort = (port: number, specs: readonly CellSpec[]): CellSpec[] =>
  specs.map((spec) => ({ ...spec, request: { ...spec.request, model: `vllm:qwen3-4b@http://127.0.0.1:${port}/v1` } }));

describe('model identity without the transport URL', () => {
  it('hashes provider + model name: the same model on another port has the same key; the URL is recorded in the request JSON', () => {
    const [a] = onPort(8000, makeSpecs(1));
    const [b] = onPort(9000, makeSpecs(1));
    expect(identityModel(a!.request)).toBe('vllm:qwen3-4b');
    expect(cellKey(a!)).toBe(cellKey(b!));
    expect(cellKey(a!)).toBe(cellKey({ ...a!.request, model: 'vllm:qwen3-4b' }));
    const id = cellIdentity(a!.request);
    expect(id.key).toBe(cellKey(a!));
    expect(JSON.parse(id.json).model).toBe('vllm:qwen3-4b@http://127.0.0.1:8000/v1');
    expect(id.legacyKey).toBe(oldRuleKey(a!.request));
    expect(id.key).not.toBe(id.legacyKey);
  });

  it('keeps a reference without URL, and replay paths, exactly as before (no legacy key)', () => {
    const [plain] = makeSpecs(1, 'openai:gpt-4.1-mini');
    expect(cellKey(plain!)).toBe(oldRuleKey(plain!.request));
    expect(cellIdentity(plain!.request).legacyKey).toBeUndefined();
    expect(identityModel({ model: 'replay:/tmp/a@http://x' })).toBe('replay:/tmp/a@http://x');
  });

  it('identity: url keeps the old rule (the base URL is part of the key)', () => {
    const [a] = onPort(8000, makeSpecs(1));
    const old = { ...a!.request, identity: 'url' as const };
    expect(cellKey(old)).toBe(oldRuleKey(a!.request));
    expect(cellIdentity(old).key).toBe(oldRuleKey(a!.request));
    expect(cellIdentity(old).legacyKey).toBeUndefined();
    expect(cellKey({ ...old, model: 'vllm:qwen3-4b@http://127.0.0.1:9000/v1' })).not.toBe(cellKey(old));
  });

  it('restarting the server on another port re-runs nothing', async () => {
    const store = RunStore.open(':memory:');
    const models = new FakeModels();
    const first = await runCells(store, await store.createRun(TEST_MANIFEST), onPort(8000, makeSpecs(6)), { adapterFor: models.adapterFor });
    expect(first).toMatchObject({ done: 6, calls: 6 });
    const second = await runCells(store, await store.createRun(TEST_MANIFEST), onPort(9000, makeSpecs(6)), { adapterFor: models.adapterFor });
    expect(second).toMatchObject({ done: 0, cached: 6, calls: 0 });
    expect(models.totalCalls).toBe(6);
    await store.close();
  });

  it('resumes a store written under the old rule (keys with the URL hashed) without a call, and keeps its keys', async () => {
    const store = RunStore.open(':memory:');
    const models = new FakeModels();
    // Written as an earlier version did: the whole reference hashed.
    const old = onPort(8000, makeSpecs(5)).map((spec) => ({ ...spec, request: { ...spec.request, identity: 'url' as const } }));
    const written = await runCells(store, await store.createRun(TEST_MANIFEST), old.slice(0, 3), { adapterFor: models.adapterFor });
    expect(written.results.map((r) => r.key)).toEqual(old.slice(0, 3).map((s) => oldRuleKey(s.request)));
    // The same plan under the new rule: the three stored cells are found by their old keys, two are new.
    const now = onPort(8000, makeSpecs(5));
    const resumed = await runCells(store, await store.createRun(TEST_MANIFEST), now, { adapterFor: models.adapterFor });
    expect(resumed).toMatchObject({ cached: 3, done: 2, calls: 2 });
    expect(resumed.results.slice(0, 3).map((r) => r.key)).toEqual(old.slice(0, 3).map((s) => oldRuleKey(s.request)));
    expect(resumed.results.slice(3).map((r) => r.key)).toEqual(now.slice(3).map((s) => cellKey(s)));
    expect(models.totalCalls).toBe(5);
    await store.close();
  });
});
