import { describe, expect, it } from 'vitest';
import { ConfigError } from '../core/errors.js';
import { ModelCallError } from '../models/errors.js';
import type { ModelRequest, TokenUsage } from '../models/types.js';
import { cellKey } from './keys.js';
import { RunStore } from './run-store.js';
import { FatalBurstError, type ProgressSnapshot, runCells } from './runner.js';
import { answerFor, FakeModels, fakeResponse, makeSpecs, TEST_MANIFEST, usageFor } from './testing/fakes.js';
import type { CellSpec } from './types.js';

async function setup() {
  const store = RunStore.open(':memory:');
  const runId = await store.createRun(TEST_MANIFEST);
  return { store, runId };
}

const noSleep = async () => {};

describe('runCells: caching and dedup', () => {
  it('runs every cell once, stores results, and answers a re-run from the store without calling', async () => {
    const { store, runId } = await setup();
    const specs = makeSpecs(25);
    const models = new FakeModels();
    const first = await runCells(store, runId, specs, { adapterFor: models.adapterFor });
    expect(first).toMatchObject({ status: 'done', done: 25, cached: 0, empty: 0, failed: 0, pending: 0, calls: 25 });
    expect(models.totalCalls).toBe(25);
    expect(first.results.map((r) => r.text)).toEqual(specs.map((s) => answerFor(s.request)));
    expect(first.results.every((r) => !r.cached && r.status === 'done' && r.attempts === 1)).toBe(true);

    const rerunId = await store.createRun(TEST_MANIFEST);
    const second = await runCells(store, rerunId, specs, { adapterFor: models.adapterFor });
    expect(models.totalCalls).toBe(25);
    expect(second).toMatchObject({ done: 0, cached: 25, calls: 0, status: 'done' });
    expect(second.results.every((r) => r.cached)).toBe(true);
    expect(second.results.map((r) => r.text)).toEqual(first.results.map((r) => r.text));
    expect((await store.requireRun(runId)).status).toBe('done');
    expect((await store.requireRun(runId)).summary).toMatchObject({ done: 25 });
  });

  it('runs identical keys within one plan once and links both label sets', async () => {
    const { store, runId } = await setup();
    const [spec] = makeSpecs(1);
    const plan: CellSpec[] = [spec!, { request: { ...spec!.request }, labels: { role: 'judge' } }, spec!];
    const models = new FakeModels();
    const summary = await runCells(store, runId, plan, { adapterFor: models.adapterFor });
    expect(models.totalCalls).toBe(1);
    expect(summary).toMatchObject({ planned: 3, total: 1, done: 1 });
    expect(summary.results).toHaveLength(3);
    expect(new Set(summary.results.map((r) => r.key)).size).toBe(1);
    expect((await store.cellsOfRun(runId)).map((cell) => cell.labels)).toEqual([spec!.labels, { role: 'judge' }]);
  });

  it('re-runs failed cells on resume unless told not to, and keeps empty cells as dropouts unless retryEmpty', async () => {
    const { store, runId } = await setup();
    const specs = makeSpecs(4);
    const broken = new FakeModels({
      respond: (request) => {
        if (request.messages[1]!.content.includes('0')) throw new ModelCallError('server', 'overloaded');
        if (request.messages[1]!.content.includes('1')) return fakeResponse('');
        return fakeResponse(answerFor(request));
      },
    });
    const first = await runCells(store, runId, specs, { adapterFor: broken.adapterFor, retry: { maxAttempts: 2 }, sleep: noSleep });
    expect(first).toMatchObject({ done: 2, empty: 1, failed: 1 });
    const healthy = new FakeModels();
    const keep = await runCells(store, await store.createRun(TEST_MANIFEST), specs, { adapterFor: healthy.adapterFor, retryFailed: false });
    expect(keep).toMatchObject({ cached: 4, done: 0 });
    const resumed = await runCells(store, runId, specs, { adapterFor: healthy.adapterFor });
    expect(resumed).toMatchObject({ cached: 3, done: 1, empty: 0 });
    expect(resumed.results[0]!.text).toBe(answerFor(specs[0]!.request));
    expect(resumed.results[0]!.attempts).toBe(3); // 2 failed attempts earlier + 1 now
    expect(resumed.results[1]!.status).toBe('empty');
    const retried = await runCells(store, runId, specs, { adapterFor: healthy.adapterFor, retryEmpty: true });
    expect(retried).toMatchObject({ cached: 3, done: 1 });
    expect(healthy.totalCalls).toBe(2);
  });
});

describe('runCells: retries, dropouts and fatal errors', () => {
  it('retries a 429 after the Retry-After wait and records the attempts', async () => {
    const { store, runId } = await setup();
    const waits: number[] = [];
    const models = new FakeModels({
      respond: (request, call) => {
        if (call === 1) throw new ModelCallError('rate_limit', 'slow down', { status: 429, retryAfterMs: 700 });
        return fakeResponse(answerFor(request));
      },
    });
    const summary = await runCells(store, runId, makeSpecs(2), {
      adapterFor: models.adapterFor,
      sleep: async (ms) => void waits.push(ms),
      concurrency: 1,
    });
    expect(waits).toEqual([700, 700]);
    expect(summary).toMatchObject({ done: 2, calls: 4 });
    expect(summary.results.map((r) => r.attempts)).toEqual([2, 2]);
  });

  it('does not retry a 400 and records the failure with its class and message', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels({
      respond: (request) => {
        if (request.messages[1]!.content.endsWith('1?')) throw new ModelCallError('bad_request', 'context too long', { status: 400 });
        return fakeResponse('fine');
      },
    });
    const summary = await runCells(store, runId, makeSpecs(3), { adapterFor: models.adapterFor, sleep: noSleep });
    expect(summary).toMatchObject({ done: 2, failed: 1, status: 'done' });
    const failed = summary.results[1]!;
    expect(failed).toMatchObject({ status: 'failed', attempts: 1, errorClass: 'bad_request', errorMessage: 'context too long' });
    expect(models.totalCalls).toBe(3);
  });

  it('records empty output after retries as an empty dropout, counting every attempt’s tokens', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels({ respond: () => fakeResponse(' ', { inputTokens: 10, outputTokens: 1 }) });
    const summary = await runCells(store, runId, makeSpecs(2), {
      adapterFor: models.adapterFor,
      costOf: (_model, usage) => usage.inputTokens * 0.001,
    });
    expect(summary).toMatchObject({ empty: 2, done: 0, failed: 0, calls: 6 });
    expect(summary.tokens.inputTokens).toBe(60);
    expect(summary.spendUsd).toBeCloseTo(0.06, 10);
    expect(summary.results[0]).toMatchObject({ status: 'empty', attempts: 3, errorClass: 'empty', costUsd: 0.03 });
    expect((await store.requireRun(runId)).counts.empty).toBe(2);
  });

  it('stops on a burst of identical fatal errors with one clear message, keeping what was stored', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels({
      respond: () => {
        throw new ModelCallError('auth', 'openai: 401 invalid API key (OPENAI_API_KEY)', { status: 401 });
      },
    });
    const error = await runCells(store, runId, makeSpecs(20), { adapterFor: models.adapterFor, concurrency: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalBurstError);
    const fatal = error as FatalBurstError;
    expect(fatal.message).toBe('stopped after 3 consecutive cells failed with the same error: openai: 401 invalid API key (OPENAI_API_KEY)');
    expect(fatal.errorKind).toBe('auth');
    expect(fatal.hint).toMatch(/API key/);
    expect(fatal.summary).toMatchObject({ failed: 3, pending: 17, stopReason: 'fatal', status: 'failed' });
    expect(models.totalCalls).toBe(3);
    expect((await store.requireRun(runId)).status).toBe('failed');
    expect((await store.requireRun(runId)).counts).toMatchObject({ failed: 3, pending: 17 });
  });

  it('does not stop on different errors or when successes interleave', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels({
      respond: (request) => {
        const n = Number(/(\d+)\?$/.exec(request.messages[1]!.content)![1]);
        if (n % 3 === 2) return fakeResponse('ok');
        throw new ModelCallError('not_found', `missing ${n}`);
      },
    });
    const summary = await runCells(store, runId, makeSpecs(12), { adapterFor: models.adapterFor, concurrency: 1 });
    expect(summary).toMatchObject({ failed: 8, done: 4, stopReason: null });
  });

  it('turns an adapter that cannot be built into failed cells and then a fatal stop', async () => {
    const { store, runId } = await setup();
    let builds = 0;
    const adapterFor = () => {
      builds += 1;
      throw new ModelCallError('config', 'unknown provider "fake"');
    };
    const error = await runCells(store, runId, makeSpecs(5), { adapterFor, concurrency: 1 }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalBurstError);
    expect((error as Error).message).toContain('unknown provider "fake"');
    expect(builds).toBe(1); // built once per ref, the failure is shared
  });
});

describe('runCells: budget, concurrency and rate limits', () => {
  const perToken = (_model: string, usage: TokenUsage) => (usage.inputTokens + usage.outputTokens) * 0.0001;

  it('stops before a cell whose worst-case cost would exceed --max-cost', async () => {
    const { store, runId } = await setup();
    const specs = makeSpecs(20); // maxTokens 64 per cell
    const models = new FakeModels();
    const summary = await runCells(store, runId, specs, {
      adapterFor: models.adapterFor,
      costOf: perToken,
      maxCostUsd: 0.02,
      concurrency: 1,
    });
    expect(summary.stopReason).toBe('budget');
    expect(summary.status).toBe('stopped');
    expect(summary.stopMessage).toMatch(/--max-cost \$0\.02/);
    expect(summary.spendUsd).toBeLessThanOrEqual(0.02);
    expect(summary.done).toBeGreaterThan(0);
    expect(summary.done).toBeLessThan(20);
    expect(summary.pending).toBe(20 - summary.done);
    expect(models.totalCalls).toBe(summary.done);
    // The next cell's worst case really would have crossed the budget.
    const worst = perToken('fake:m', { ...usageFor(specs[0]!.request), inputTokens: 20, outputTokens: 64 });
    expect(summary.spendUsd + worst).toBeGreaterThan(0.02);
  });

  it('counts the spend of earlier stages of the run against the same budget', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels();
    const alone = await runCells(store, runId, makeSpecs(20), { adapterFor: models.adapterFor, costOf: perToken, maxCostUsd: 0.02, concurrency: 1 });
    const { store: store2, runId: runId2 } = await setup();
    const after = await runCells(store2, runId2, makeSpecs(20), {
      adapterFor: models.adapterFor,
      costOf: perToken,
      maxCostUsd: 0.02,
      spentBeforeUsd: 0.01,
      concurrency: 1,
    });
    expect(after.stopReason).toBe('budget');
    expect(after.done).toBeLessThan(alone.done);
    expect(0.01 + after.spendUsd).toBeLessThanOrEqual(0.02);
    // The message names the run's spend, earlier stages included.
    const spent = Number(/spent \$([\d.]+)/.exec(after.stopMessage ?? '')?.[1]);
    expect(spent).toBeCloseTo(0.01 + after.spendUsd, 4);
  });

  it('prices calls with the built-in price table by default', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels({ respond: () => fakeResponse('ok', { inputTokens: 1_000_000, outputTokens: 1_000_000 }) });
    const summary = await runCells(store, runId, makeSpecs(1, 'openai:gpt-4.1-mini'), { adapterFor: models.adapterFor });
    // 1M input at $0.40 + 1M output at $1.60 (data/prices.json).
    expect(summary.spendUsd).toBeCloseTo(2.0, 9);
    expect(summary.results[0]!.costUsd).toBeCloseTo(2.0, 9);
    expect(summary.unpricedCells).toBe(0);
    const unpriced = await runCells(store, await store.createRun(TEST_MANIFEST), makeSpecs(1, 'fake:m'), { adapterFor: models.adapterFor });
    expect(unpriced).toMatchObject({ spendUsd: 0, unpricedCells: 1 });
    expect(unpriced.results[0]!.costUsd).toBeNull();
  });

  it('refuses a budget it cannot enforce', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels();
    await expect(runCells(store, runId, makeSpecs(2), { adapterFor: models.adapterFor, costOf: () => null, maxCostUsd: 1 })).rejects.toThrow(ConfigError);
    // The built-in price table knows no `fake:` provider.
    await expect(runCells(store, runId, makeSpecs(2), { adapterFor: models.adapterFor, maxCostUsd: 1 })).rejects.toThrow(/no price is known for fake:m/);
    expect(models.totalCalls).toBe(0);
  });

  it('respects the concurrency limit per provider', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels({ delayMs: 5 });
    const specs = [...makeSpecs(30, 'alpha:m'), ...makeSpecs(30, 'beta:m')];
    const summary = await runCells(store, runId, specs, {
      adapterFor: models.adapterFor,
      concurrency: { alpha: 3, '*': 2 },
    });
    expect(summary.done).toBe(60);
    expect(models.maxActiveByProvider.get('alpha')).toBe(3);
    expect(models.maxActiveByProvider.get('beta')).toBe(2);
    expect(models.maxActive).toBeLessThanOrEqual(5);
  });

  it('paces requests per minute with a token bucket on an injected clock', async () => {
    const { store, runId } = await setup();
    let clock = 0;
    const starts: number[] = [];
    const models = new FakeModels({ onCall: () => starts.push(clock) });
    const summary = await runCells(store, runId, makeSpecs(14), {
      adapterFor: models.adapterFor,
      limits: { fake: { requestsPerMinute: 60 } }, // burst 10, then one per second
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      // One at a time: with an instant fake sleep, a waiting task would move the clock under running ones.
      concurrency: 1,
    });
    expect(summary.done).toBe(14);
    expect(starts.slice(0, 10)).toEqual(Array(10).fill(0));
    expect(starts.slice(10)).toEqual([1000, 2000, 3000, 4000]);
  });

  it('paces tokens per minute from the estimated request size', async () => {
    const { store, runId } = await setup();
    let clock = 0;
    const starts: number[] = [];
    const models = new FakeModels({ onCall: () => starts.push(clock), respond: () => fakeResponse('x') });
    // Each cell: ~18 input tokens (estimate) + 64 max output = 82; 600 tokens/min = 10 tokens/s.
    const specs = makeSpecs(3);
    await runCells(store, runId, specs, {
      adapterFor: models.adapterFor,
      limits: { '*': { tokensPerMinute: 600 } },
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      concurrency: 1,
    });
    expect(starts[0]).toBe(0);
    // Bucket capacity 100: first cell leaves 18; real usage 0 refunds nothing (unknown), next waits for 82.
    expect(starts[1]).toBeGreaterThan(0);
    expect(starts[2]! - starts[1]!).toBeGreaterThanOrEqual(8000);
  });
});

describe('runCells: interruption and progress', () => {
  it('on abort starts nothing new, lets running calls finish and store, and resumes later', async () => {
    const { store, runId } = await setup();
    const controller = new AbortController();
    const release: Array<() => void> = [];
    const models = new FakeModels({
      respond: async (request) => {
        if (release.length === 2) controller.abort();
        await new Promise<void>((resolve) => release.push(resolve));
        return fakeResponse(answerFor(request));
      },
    });
    const specs = makeSpecs(10);
    const running = runCells(store, runId, specs, { adapterFor: models.adapterFor, signal: controller.signal, concurrency: 3 });
    while (release.length < 3) await new Promise((resolve) => setTimeout(resolve, 1));
    for (const resolve of release) resolve();
    const summary = await running;
    expect(summary).toMatchObject({ interrupted: true, stopReason: 'interrupted', done: 3, pending: 7, status: 'interrupted' });
    expect(models.totalCalls).toBe(3);
    expect(await store.requireRun(runId)).toMatchObject({ status: 'interrupted', counts: { done: 3, pending: 7 } });

    const healthy = new FakeModels();
    const resumed = await runCells(store, runId, specs, { adapterFor: healthy.adapterFor });
    expect(resumed).toMatchObject({ cached: 3, done: 7, interrupted: false, status: 'done' });
    expect(healthy.totalCalls).toBe(7);
  });

  it('a hard stop cancels running requests and leaves their cells pending', async () => {
    const { store, runId } = await setup();
    const graceful = new AbortController();
    const hard = new AbortController();
    let started = 0;
    const adapterFor = (ref: string) => ({
      ref,
      provider: 'fake',
      modelId: 'm',
      generate: (_request: ModelRequest, options?: { signal?: AbortSignal }) =>
        new Promise<never>((_resolve, reject) => {
          started += 1;
          options?.signal?.addEventListener('abort', () => reject(new ModelCallError('aborted', 'request cancelled')));
          if (started === 2) {
            graceful.abort();
            hard.abort();
          }
        }),
    });
    const summary = await runCells(store, runId, makeSpecs(6), {
      adapterFor,
      signal: graceful.signal,
      hardSignal: hard.signal,
      concurrency: 2,
    });
    expect(started).toBe(2);
    expect(summary).toMatchObject({ interrupted: true, done: 0, failed: 0, pending: 6 });
    expect((await store.requireRun(runId)).counts.pending).toBe(6);
  });

  it('leaves a cell waiting to retry pending when the run is interrupted', async () => {
    const { store, runId } = await setup();
    const controller = new AbortController();
    const models = new FakeModels({
      respond: () => {
        throw new ModelCallError('server', 'overloaded');
      },
    });
    const summary = await runCells(store, runId, makeSpecs(1), {
      adapterFor: models.adapterFor,
      signal: controller.signal,
      sleep: (_ms, signal) =>
        new Promise((_resolve, reject) => {
          signal?.addEventListener('abort', () => reject(new Error('aborted')));
          controller.abort();
        }),
    });
    expect(summary).toMatchObject({ interrupted: true, failed: 0, pending: 1 });
    expect((await store.getCell(summary.results[0]!.key))!.status).toBe('pending');
  });

  it('reports progress after every stored cell', async () => {
    const { store, runId } = await setup();
    const snapshots: ProgressSnapshot[] = [];
    const statuses: Array<Promise<string | undefined>> = [];
    const models = new FakeModels();
    const specs = makeSpecs(5);
    await runCells(store, runId, specs.slice(0, 2), { adapterFor: models.adapterFor });
    await runCells(store, runId, specs, {
      adapterFor: models.adapterFor,
      costOf: () => 0.5,
      onProgress: (snapshot) => {
        // Read at the moment of the snapshot: the cell it names is stored already.
        if (snapshot.last) statuses.push(store.getCell(snapshot.last.key).then((cell) => cell?.status));
        snapshots.push(snapshot);
      },
    });
    expect(await Promise.all(statuses)).toEqual(['done', 'done', 'done']);
    expect(snapshots.map((s) => s.finished)).toEqual([2, 3, 4, 5]);
    expect(snapshots[0]).toMatchObject({ total: 5, cached: 2, done: 0 });
    expect(snapshots.at(-1)).toMatchObject({ done: 3, spendUsd: 1.5, inFlight: 0 });
    expect(snapshots.at(-1)!.tokens.inputTokens).toBeGreaterThan(0);
  });
});

describe('runCells: prompt-cache scheduling', () => {
  it('runs the first cell of each long-prefix group before the rest of that group', async () => {
    const { store, runId } = await setup();
    const prefix = (tag: string) => `${tag} context `.repeat(600);
    const specs: CellSpec[] = [];
    for (let probe = 0; probe < 4; probe += 1) {
      for (const group of ['A', 'B', 'C']) {
        const request: ModelRequest = {
          model: 'fake:m',
          messages: [
            { role: 'user', content: prefix(group), cacheBreakpoint: true },
            { role: 'user', content: `probe ${probe}` },
          ],
          params: {},
          sample: 0,
        };
        specs.push({ request, labels: { group, probe } });
      }
    }
    const models = new FakeModels({ delayMs: 2 });
    await runCells(store, runId, specs, { adapterFor: models.adapterFor, concurrency: 8 });
    const groupOf = new Map(specs.map((spec) => [cellKey(spec), spec.labels.group as string]));
    const leaderKey = new Map(['A', 'B', 'C'].map((g, i) => [g, cellKey(specs[i]!)]));
    const finishedLeaderBefore = (group: string, position: number) => models.order.indexOf(leaderKey.get(group)!) < position;
    models.order.forEach((key, position) => {
      const group = groupOf.get(key)!;
      if (key !== leaderKey.get(group)) expect(finishedLeaderBefore(group, position)).toBe(true);
    });
    expect(models.order.slice(0, 3).sort()).toEqual([...leaderKey.values()].sort());
  });

  it('keeps plan order with schedule "plan"', async () => {
    const { store, runId } = await setup();
    const models = new FakeModels();
    const specs = makeSpecs(6);
    await runCells(store, runId, specs, { adapterFor: models.adapterFor, schedule: 'plan', concurrency: 1 });
    expect(models.order).toEqual(specs.map((spec) => cellKey(spec)));
  });
});

describe('runCells: argument checks', () => {
  it('rejects bad options and unknown runs with the argument named', async () => {
    const { store, runId } = await setup();
    await expect(runCells(store, runId, makeSpecs(1), { concurrency: 0 })).rejects.toThrow(/concurrency/);
    await expect(runCells(store, runId, makeSpecs(1), { limits: { x: { requestsPerMinute: -1 } } })).rejects.toThrow(/limits\.x\.requestsPerMinute/);
    await expect(runCells(store, 'nope', makeSpecs(1), {})).rejects.toThrow(/no run "nope"/);
  });
});
