import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { createAdapter } from '../models/create-adapter.js';
import { GENEROUS_TIMEOUTS, useFakeProviders } from '../models/testing/harness.js';
import { RunStore } from '../store/run-store.js';
import { runCells } from '../store/runner.js';
import { FakeModels, TEST_MANIFEST } from '../store/testing/fakes.js';
import type { CellSpec } from '../store/types.js';
import { runParsedStage } from '../experiment/runtime.js';
import { ALLOWED_LABELS_HEADER, LABELER_SYSTEM_PROMPT, legacyLabelerMessages } from './labeler.js';
import { loadBuiltinOntology } from './ontology.js';
import { dryRunMemory, labelingItem, loadMemoryConfig, memoryRunner } from './run.js';

/**
 * The labeler's static part (instructions, ontology, rules, allowed labels) is a cacheable
 * prefix: the system message, marked for Anthropic where it reaches the model's minimum and
 * first in the messages for OpenAI; the dry run prices it; a store written with the earlier
 * prompt shape resumes under its old keys (issue 34).
 */

registerBuiltinSimProfiles();
const KEY = 'sk-test-labeler-cache';
const fakes = useFakeProviders(KEY);
const example = join(import.meta.dirname, '..', '..', 'examples', 'memory-sim.yaml');
const ontology = loadBuiltinOntology();
const steps = ['Keep a cushion of savings.', 'Be honest with the family.'];

function labelerSpec(labeler: string, stepTexts: readonly string[] = steps): CellSpec {
  const config = loadMemoryConfig(example, [`labeler=${labeler}`]);
  return labelingItem(stepTexts, config, { labeler, ontology, labels: { stage: 'labeling' } }).spec;
}

describe('labeler prompt on the wire', () => {
  it('Anthropic (Sonnet): the static part is the system block and carries the cache breakpoint; the steps do not', async () => {
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    const adapter = createAdapter(ref, { env: { ANTHROPIC_API_KEY: KEY }, ...GENEROUS_TIMEOUTS });
    const before = fakes.anthropic.requests.length;
    await adapter.generate(labelerSpec(ref).request);
    const body = fakes.anthropic.requests[before]!.body as { system: Array<{ text: string; cache_control?: unknown }>; messages: Array<{ content: unknown }> };
    expect(body.system).toHaveLength(1);
    expect(body.system[0]!.text.startsWith(LABELER_SYSTEM_PROMPT)).toBe(true);
    expect(body.system[0]!.text).toContain(ALLOWED_LABELS_HEADER);
    expect(body.system[0]!.cache_control).toEqual({ type: 'ephemeral' });
    expect(JSON.stringify(body.messages)).toContain('Be honest with the family.');
    expect(JSON.stringify(body.messages)).not.toContain('cache_control');
    expect(JSON.stringify(body.messages)).not.toContain(ALLOWED_LABELS_HEADER);
  });

  it('Anthropic (Haiku 4.5): no breakpoint, since the static part is under its 4,096-token minimum', async () => {
    const ref = `anthropic:claude-haiku-4-5@${fakes.anthropic.baseURL}`;
    const adapter = createAdapter(ref, { env: { ANTHROPIC_API_KEY: KEY }, ...GENEROUS_TIMEOUTS });
    const before = fakes.anthropic.requests.length;
    await adapter.generate(labelerSpec(ref).request);
    const body = fakes.anthropic.requests[before]!.body as { system: Array<{ cache_control?: unknown }> };
    expect(body.system[0]!.cache_control).toBeUndefined();
  });

  it('OpenAI: the static part comes first, identical across cells, and the steps last', async () => {
    const ref = `openai:gpt-4.1@${fakes.openai.baseURL}`;
    const adapter = createAdapter(ref, { env: { OPENAI_API_KEY: KEY }, ...GENEROUS_TIMEOUTS });
    const before = fakes.openai.requests.length;
    await adapter.generate(labelerSpec(ref).request);
    await adapter.generate(labelerSpec(ref, ['A different step entirely.']).request);
    const [a, b] = fakes.openai.requests.slice(before).map((r) => (r.body as { messages: Array<{ role: string; content: string }> }).messages);
    expect(a![0]!.role).toBe('system');
    expect(a![0]!.content).toContain(ALLOWED_LABELS_HEADER);
    expect(b![0]).toEqual(a![0]);
    expect(a!.at(-1)!.content).toContain('<step number="2">');
    expect(b!.at(-1)!.content).not.toEqual(a!.at(-1)!.content);
  });
});

describe('labeler caching in the dry-run estimate', () => {
  async function estimateFor(labeler: string) {
    const config = loadMemoryConfig(example, [`labeler=${labeler}`]);
    const input = await memoryRunner.prepare(config);
    const { estimate } = dryRunMemory(config, input.stimuli, memoryRunner.plan(config, input));
    return { estimate, model: estimate.perModel.find((m) => m.model === labeler)! };
  }

  it('the memory example with a Sonnet labeler is expected at ≤ 0.5 of naive, the static part read from the cache', async () => {
    const { estimate, model } = await estimateFor('anthropic:claude-sonnet-4-5');
    expect(estimate.expected!.dollars / estimate.dollars.low).toBeLessThanOrEqual(0.5);
    // Every labeler cell after the first reads the static part; the first writes it.
    expect(model.cacheWriteTokens).toBeGreaterThan(1024);
    expect(model.cachedInputTokens).toBe(model.cacheWriteTokens * (model.cells - 1));
    expect(model.cachedInputTokens / model.inputTokens).toBeGreaterThan(0.75);
  });

  it('a Haiku 4.5 labeler gets no cache discount (the static part is under its minimum)', async () => {
    const { estimate, model } = await estimateFor('anthropic:claude-haiku-4-5');
    expect(model.cachedInputTokens).toBe(0);
    expect(estimate.expected!.dollars).toBeCloseTo(estimate.dollars.low, 10);
  });

  it('prices a labeler answer at the length of its JSON form, not the generic 400 tokens', async () => {
    const { model } = await estimateFor('anthropic:claude-sonnet-4-5');
    expect(model.outputTokens.expected / model.cells).toBeGreaterThan(20);
    expect(model.outputTokens.expected / model.cells).toBeLessThan(200);
  });
});

describe('a store written with the earlier labeler prompt', () => {
  it('resumes under the old keys: no call for a cell answered before, and a re-ask of it is found too', async () => {
    const store = RunStore.open(':memory:');
    const runId = await store.createRun(TEST_MANIFEST);
    const labeler = 'anthropic:claude-sonnet-4-5';
    const config = loadMemoryConfig(example, [`labeler=${labeler}`]);
    const item = labelingItem(steps, config, { labeler, ontology, labels: { stage: 'labeling' } });
    const legacy = legacyLabelerMessages(item.spec.request.messages)!;
    expect(item.spec.legacyRequests).toEqual([{ ...item.spec.request, messages: legacy }]);

    // The old run: the labeler answered badly once, then well on the re-ask, both in the old shape.
    const bad = 'not json';
    const good = JSON.stringify({
      labels: [
        { step: 1, label: 'unmapped' },
        { step: 2, label: 'unmapped' },
      ],
    });
    const oldFirst: CellSpec = { request: { ...item.spec.request, messages: legacy }, labels: item.spec.labels };
    const oldReask: CellSpec = { request: { ...item.spec.request, messages: item.reask(legacy, bad) }, labels: item.spec.labels };
    const old = new FakeModels({
      respond: (request) => ({
        text: request.messages.length > 2 ? good : bad,
        finishReason: 'stop',
        usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        latencyMs: 0,
      }),
    });
    await runCells(store, runId, [oldFirst, oldReask], { adapterFor: old.adapterFor, costOf: () => 0 });
    expect(old.totalCalls).toBe(2);

    // Today's plan: new-shape cells, resumed from the old ones without a call.
    const now = new FakeModels();
    const { outcomes } = await runParsedStage(store, runId, [item], 2, { adapterFor: now.adapterFor, progress: false });
    expect(now.totalCalls).toBe(0);
    expect(outcomes[0]).toMatchObject({ status: 'ok', value: ['unmapped', 'unmapped'], attempts: 2 });

    // A store without the old cells calls the new shape, under its own key.
    const fresh = RunStore.open(':memory:');
    const freshRun = await fresh.createRun(TEST_MANIFEST);
    const called = new FakeModels({
      respond: () => ({
        text: good,
        finishReason: 'stop',
        usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
        latencyMs: 0,
      }),
    });
    const result = await runCells(fresh, freshRun, [item.spec], { adapterFor: called.adapterFor, costOf: () => 0 });
    expect(called.totalCalls).toBe(1);
    expect((await fresh.cellsOfRun(freshRun))[0]!.request.messages[0]!.content).toContain(ALLOWED_LABELS_HEADER);
    expect(result.results[0]!.key).not.toBe((await runCells(store, runId, [oldFirst], { adapterFor: old.adapterFor, costOf: () => 0 })).results[0]!.key);
  });
});
