import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ModelCallError } from '../models/errors.js';
import type { TokenUsage } from '../models/types.js';
import { type RunStore, openStore } from './run-store.js';
import { runCells } from './runner.js';
import { fakeBatchKit } from './testing/batch-kit.js';
import { expectJobWithoutBatchIdReleased, expectStopAfterSubmitResumes } from './testing/batch-resume.js';
import { storeBackends } from './testing/backends.js';
import { answerFor, FakeModels, fakeResponse, makeSpecs, TEST_MANIFEST, usageFor } from './testing/fakes.js';

// The store's resume cases on both backends: an interrupted run, a run whose cells failed,
// and `--batch` runs stopped after submitting or killed inside the create call. The
// single-backend versions are in runner.test.ts and batch-runner.test.ts (SQLite); the
// kill tests are crash.test.ts and batch-crash.test.ts (both backends).

const env = { OPENAI_API_KEY: 'sk-batch-test-key' };
const costOf = (_model: string, usage: TokenUsage) => (usage.inputTokens + usage.outputTokens * 4) / 1_000_000;
const batchOptions = { env, costOf, pollIntervalMs: 0, sleep: async () => {} };
const { fake } = fakeBatchKit('echolens-resume-');

async function openRun(location: string): Promise<{ store: RunStore; runId: string }> {
  const store = openStore(location, { env: {} });
  const runId = (await store.getRun('resume-test')) ? 'resume-test' : await store.createRun(TEST_MANIFEST, { id: 'resume-test' });
  return { store, runId };
}

describe.each(storeBackends())('resume ($name)', (backend) => {
  beforeAll(() => (backend.available ? backend.setup() : undefined), 120_000);
  afterAll(() => backend.teardown());

  it.skipIf(!backend.available)('an interrupted run resumes: finished cells are not called again, the rest are', async () => {
    const location = backend.location('interrupted');
    const specs = makeSpecs(24);
    const first = await openRun(location);
    const controller = new AbortController();
    const models = new FakeModels({ delayMs: 5 });
    const stopped = await runCells(first.store, first.runId, specs, {
      adapterFor: models.adapterFor,
      concurrency: 2,
      costOf: () => 0,
      signal: controller.signal,
      onProgress: (snapshot) => {
        if (snapshot.done >= 6) controller.abort();
      },
    });
    expect(stopped.status).toBe('interrupted');
    expect(stopped.done).toBeGreaterThanOrEqual(6);
    expect(stopped.pending).toBeGreaterThan(0);
    expect(stopped.done + stopped.pending).toBe(24);
    const doneFirst = new Set(stopped.results.filter((r) => r.status === 'done').map((r) => r.key));
    await first.store.close();

    const second = await openRun(location);
    const again = new FakeModels();
    const resumed = await runCells(second.store, second.runId, specs, { adapterFor: again.adapterFor, concurrency: 4, costOf: () => 0 });
    expect(resumed).toMatchObject({ status: 'done', cached: doneFirst.size, done: 24 - doneFirst.size, pending: 0 });
    for (const key of again.calls.keys()) expect(doneFirst.has(key)).toBe(false);
    expect(again.totalCalls).toBe(24 - doneFirst.size);
    expect(resumed.results.map((r) => r.text)).toEqual(specs.map((spec) => answerFor(spec.request)));
    expect((await second.store.requireRun(second.runId)).status).toBe('done');
    await second.store.close();
  });

  it.skipIf(!backend.available)('failed cells are called again on resume (and not with retryFailed: false)', async () => {
    const location = backend.location('failed');
    const specs = makeSpecs(6);
    const first = await openRun(location);
    const failing = new FakeModels({
      respond: (request) => {
        if (request.messages[1]!.content === 'Question number 2?') throw new ModelCallError('bad_request', 'refused by the fake');
        return fakeResponse(answerFor(request), usageFor(request));
      },
    });
    const firstRun = await runCells(first.store, first.runId, specs, { adapterFor: failing.adapterFor, costOf: () => 0, retry: { maxAttempts: 1 } });
    expect(firstRun).toMatchObject({ done: 5, failed: 1 });
    await first.store.close();

    const kept = await openRun(location);
    const none = new FakeModels();
    const notRetried = await runCells(kept.store, kept.runId, specs, { adapterFor: none.adapterFor, costOf: () => 0, retryFailed: false });
    expect(notRetried).toMatchObject({ cached: 6, done: 0 });
    expect(none.totalCalls).toBe(0);
    await kept.store.close();

    const second = await openRun(location);
    const again = new FakeModels();
    const resumed = await runCells(second.store, second.runId, specs, { adapterFor: again.adapterFor, costOf: () => 0 });
    expect(resumed).toMatchObject({ status: 'done', cached: 5, done: 1, failed: 0 });
    expect(again.totalCalls).toBe(1);
    expect(resumed.results[2]).toMatchObject({ status: 'done', text: answerFor(specs[2]!.request), attempts: 2 });
    await second.store.close();
  });

  it.skipIf(!backend.available)('--batch stopped after submitting: the next run collects the job and submits nothing again', async () => {
    const server = await fake({ provider: 'openai', pollsUntilDone: 1 });
    const location = backend.location('batch_stop');
    await expectStopAfterSubmitResumes(() => openRun(location), server, makeSpecs(4, `openai:model-x@${server.baseURL}`), batchOptions);
  });

  it.skipIf(!backend.available)('--batch killed inside the create call (a job without batch id): released, its cells submitted again', async () => {
    const server = await fake({ provider: 'openai' });
    const location = backend.location('batch_noid');
    await expectJobWithoutBatchIdReleased(() => openRun(location), server, makeSpecs(2, `openai:model-x@${server.baseURL}`), batchOptions);
  });
});
