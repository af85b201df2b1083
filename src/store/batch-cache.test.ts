import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../models/types.js';
import { runCellsBatch } from './batch-runner.js';
import { batchWaves, cachePolicyFor, promptCacheKeyOf } from './cache-schedule.js';
import { RunStore } from './run-store.js';
import { providerOf } from './runner-options.js';
import { prefixSignature } from './schedule.js';
import { TEST_MANIFEST } from './testing/fakes.js';
import type { CellSpec } from './types.js';
import { fakeBatchKit } from './testing/batch-kit.js';

// Issue 34 item 1: --batch and prompt caching stacked — leaders first, followers in a second batch.

const env = { OPENAI_API_KEY: 'sk-cache-batch', ANTHROPIC_API_KEY: 'ak-cache-batch' };
const { fake, storeFile } = fakeBatchKit('echolens-batch-cache-');

/** `groups` contexts of ~6,000 characters, `probes` probes each, plus `singles` short cells in no group. */
function grid(model: string, groups: number, probes: number, singles: number): CellSpec[] {
  const specs: CellSpec[] = [];
  for (let probe = 0; probe < probes; probe += 1) {
    for (let group = 0; group < groups; group += 1) {
      const messages: ChatMessage[] = [
        { role: 'system', content: 'You are a coding agent.' },
        { role: 'user', content: `Session ${group}: ${'read the file, run the tests, fix the bug. '.repeat(150)}` },
        { role: 'assistant', content: 'Understood.', cacheBreakpoint: true },
        { role: 'user', content: `Probe ${probe}?` },
      ];
      specs.push({ request: { model, messages, params: { maxTokens: 64 }, sample: 0 }, labels: { group, probe } });
    }
  }
  for (let single = 0; single < singles; single += 1) {
    specs.push({
      request: { model, messages: [{ role: 'user', content: `Short question ${single}?` }], params: { maxTokens: 64 }, sample: 0 },
      labels: { single },
    });
  }
  return specs;
}

describe('batchWaves', () => {
  it('puts one leader per prefix group and every ungrouped cell first, the rest second, with the group cache key where the provider takes one', () => {
    const specs = grid('openai:gpt-4.1', 3, 4, 2);
    const requests = specs.map((s) => s.request);
    const waves = batchWaves(requests, { providerOf, policyOf: (p) => cachePolicyFor(p) });
    expect(waves.leaders).toEqual([0, 1, 2, 12, 13]);
    expect(waves.followers).toEqual([3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(waves.cacheKeyOf(4)).toBe(promptCacheKeyOf(prefixSignature(requests[1]!)!));
    expect(waves.cacheKeyOf(4)).toBe(waves.cacheKeyOf(1));
    expect(waves.cacheKeyOf(4)).not.toBe(waves.cacheKeyOf(0));
    expect(waves.cacheKeyOf(12)).toBeUndefined();
    const anthropic = batchWaves(
      grid('anthropic:claude-sonnet-4-5', 2, 2, 0).map((s) => s.request),
      { providerOf, policyOf: (p) => cachePolicyFor(p) },
    );
    expect(anthropic.cacheKeyOf(0)).toBeUndefined();
  });
});

for (const provider of ['openai', 'anthropic'] as const) {
  it(`${provider}: a --batch stage sends the leaders first, then the followers with the cache settings in their bodies`, async () => {
    const server = await fake({ provider });
    const store = RunStore.open(storeFile(), { env: {} });
    const runId = await store.createRun(TEST_MANIFEST, { id: 'waves' });
    const specs = grid(`${provider}:model-x@${server.baseURL}`, 3, 4, 1);
    const notes: string[] = [];
    const summary = await runCellsBatch(store, runId, specs, { env, costOf: () => 0, pollIntervalMs: 0, sleep: async () => {}, notify: (l) => notes.push(l) });
    expect(summary).toMatchObject({ status: 'done', done: 13, failed: 0 });
    expect(server.batches.map((b) => b.customIds.length)).toEqual([4, 9]);
    expect(notes.some((n) => n.includes('submitting 9 cells that read their prompt cache'))).toBe(true);
    const [first, second] = server.batches;
    if (provider === 'openai') {
      const keysOf = (batch: typeof first) => batch!.lines.map((l) => l.body.prompt_cache_key);
      expect(new Set(keysOf(first).filter(Boolean)).size).toBe(3);
      expect(new Set(keysOf(second))).toEqual(new Set(keysOf(first).filter(Boolean)));
    } else {
      // The breakpoint stays in the batch body, with the 1-hour lifetime.
      const controls = second!.lines.map((l) => JSON.stringify(l.body).match(/"cache_control":\{[^}]*\}/g));
      for (const found of controls) expect(found).toEqual(['"cache_control":{"type":"ephemeral","ttl":"1h"}']);
    }
    await store.close();
  });
}

it('schedule "plan" keeps one wave', async () => {
  const server = await fake({ provider: 'openai' });
  const store = RunStore.open(storeFile(), { env: {} });
  const runId = await store.createRun(TEST_MANIFEST, { id: 'plan' });
  await runCellsBatch(store, runId, grid(`openai:model-x@${server.baseURL}`, 2, 3, 0), {
    env,
    costOf: () => 0,
    pollIntervalMs: 0,
    sleep: async () => {},
    schedule: 'plan',
  });
  expect(server.batches.map((b) => b.customIds.length)).toEqual([6]);
  await store.close();
});

it('a stage summary says what it was billed against the naive price and how many cells read the cache', async () => {
  const server = await fake({
    provider: 'anthropic',
    // Every follower reports a cache read of 1,000 of its 1,200 input tokens.
    respond: (request) => {
      const follower = JSON.stringify(request.body).includes('Probe 0?') === false;
      return { text: 'ok', usage: { inputTokens: 1200, outputTokens: 10, cachedInputTokens: follower ? 1000 : 0, cacheWriteTokens: follower ? 0 : 1000 } };
    },
  });
  const store = RunStore.open(storeFile(), { env: {} });
  const runId = await store.createRun(TEST_MANIFEST, { id: 'billing' });
  // $1 per 1M input, cache reads $0.10, writes $1.25, $4 per 1M output (online).
  const costOf = (_m: string, u: { inputTokens: number; cachedInputTokens: number; cacheWriteTokens: number; outputTokens: number }) =>
    ((u.inputTokens - u.cachedInputTokens - u.cacheWriteTokens) * 1 + u.cachedInputTokens * 0.1 + u.cacheWriteTokens * 1.25 + u.outputTokens * 4) / 1e6;
  const summary = await runCellsBatch(store, runId, grid(`anthropic:model-x@${server.baseURL}`, 2, 3, 0), {
    env,
    costOf,
    pollIntervalMs: 0,
    sleep: async () => {},
    cache: { cacheTtl: '5m' },
  });
  expect(summary).toMatchObject({ done: 6, cacheReadCells: 4 });
  // Naive: 6 × (1,200 + 10 × 4) online. Billed: half of 2 leaders (200 + 1,250 + 40) and 4 followers (200 + 100 + 40).
  expect(summary.naiveUsd).toBeCloseTo((6 * 1240) / 1e6, 12);
  expect(summary.spendUsd).toBeCloseTo(((2 * 1490 + 4 * 340) / 1e6) * 0.5, 12);
  await store.close();
});
