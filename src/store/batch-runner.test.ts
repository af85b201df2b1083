import { describe, expect, it } from 'vitest';
import { type BatchClient, createAdapter, createBatchClient } from '../models/index.js';
import type { TokenUsage } from '../models/types.js';
import { BatchJobs } from './batch-jobs.js';
import { runCellsBatch } from './batch-runner.js';
import { SqliteRunStore } from './run-store.js';
import { runCells } from './runner.js';
import { makeSpecs, TEST_MANIFEST } from './testing/fakes.js';
import type { CellSpec } from './types.js';
import { fakeBatchKit } from './testing/batch-kit.js';
import { expectJobWithoutBatchIdReleased, expectStopAfterSubmitResumes } from './testing/batch-resume.js';

const env = { OPENAI_API_KEY: 'sk-batch-test-key', ANTHROPIC_API_KEY: 'ak-batch-test-key' };
/** $1 per 1M input tokens, $4 per 1M output tokens (online). */
const costOf = (_model: string, usage: TokenUsage) => (usage.inputTokens * 1 + usage.outputTokens * 4) / 1_000_000;
const noSleep = async () => {};

const { fake, storeFile } = fakeBatchKit('echolens-batch-');

async function openRun(file: string) {
  const store = SqliteRunStore.open(file, { env: {} });
  const runId = (await store.getRun('batch-test')) ? 'batch-test' : await store.createRun(TEST_MANIFEST, { id: 'batch-test' });
  return { store, runId };
}

const batchOptions = { env, costOf, pollIntervalMs: 0, sleep: noSleep };

/** The stored columns a result is made of, minus what differs by nature (time, latency, cost). */
async function comparable(store: SqliteRunStore, runId: string) {
  return (await store.cellsOfRun(runId)).map(({ result }) => {
    const { startedAt: _s, finishedAt: _f, latencyMs: _l, costUsd: _c, cached: _k, ...rest } = result;
    return rest;
  });
}

for (const provider of ['openai', 'anthropic'] as const) {
  describe(`--batch over the ${provider} batch wire format`, () => {
    it('uploads, creates, polls until ended and stores results identical to an online run at half the cost', async () => {
      const server = await fake({ provider, pollsUntilDone: 2 });
      const specs = makeSpecs(6, `${provider}:model-x@${server.baseURL}`);

      const onlineRun = await openRun(storeFile());
      const online = await runCells(onlineRun.store, onlineRun.runId, specs, { adapterFor: (ref) => createAdapter(ref, { env }), costOf, sleep: noSleep });

      const notes: string[] = [];
      const batchRun = await openRun(storeFile());
      const batched = await runCellsBatch(batchRun.store, batchRun.runId, specs, { ...batchOptions, notify: (line) => notes.push(line) });

      expect(batched).toMatchObject({ status: 'done', done: 6, failed: 0, pending: 0 });
      expect(await comparable(batchRun.store, batchRun.runId)).toEqual(await comparable(onlineRun.store, onlineRun.runId));
      expect(batched.results.map((r) => r.text)).toEqual(specs.map((_s, i) => `answer to Question number ${i}?`));
      expect(online.spendUsd).toBeGreaterThan(0);
      expect(batched.spendUsd / online.spendUsd).toBeCloseTo(0.5, 12);
      for (const cell of await batchRun.store.cellsOfRun(batchRun.runId)) expect(cell.result.latencyMs).toBeNull();

      // One batch, each custom_id once, polled in progress before it ended.
      expect(server.batches).toHaveLength(1);
      expect([...server.submissions.values()]).toEqual([1, 1, 1, 1, 1, 1]);
      expect(notes.some((n) => n.includes('in_progress'))).toBe(true);
      expect(notes.some((n) => /6\/6 done/.test(n))).toBe(true);
      if (provider === 'openai') {
        expect(server.requests.map((r) => `${r.method} ${r.path.replace(/_fake_\d+|-[a-z]+-[\w-]+/g, '')}`)).toEqual([
          'POST /v1/files',
          'POST /v1/batches',
          'GET /v1/batches/batch',
          'GET /v1/batches/batch',
          'GET /v1/batches/batch',
          'GET /v1/batches/batch',
          'GET /v1/files/file/content',
        ]);
      } else {
        expect(server.requests.at(0)).toMatchObject({ method: 'POST', path: '/v1/messages/batches' });
        expect(server.requests.at(-1)?.path).toMatch(/\/v1\/messages\/batches\/msgbatch_fake_0\/results$/);
      }
      const [job] = await new BatchJobs(batchRun.store.db).all();
      expect(job).toMatchObject({ provider, status: 'collected', keys: batched.results.map((r) => r.key) });
      expect(job!.endedAt).not.toBeNull();
      // The key reaches neither the store nor the jobs table.
      expect(JSON.stringify(batchRun.store.db.prepare('SELECT * FROM batch_jobs').all())).not.toContain('batch-test-key');
      await onlineRun.store.close();
      await batchRun.store.close();
    });

    it('turns errored lines into failed cells with their error class and expired lines into failed cells a later run resubmits', async () => {
      const server = await fake({ provider });
      const specs = makeSpecs(5, `${provider}:model-x@${server.baseURL}`);
      const keyOf = (i: number) => specs[i]!.request.messages[1]!.content;
      server.setLineOutcome((_id, body) => {
        const text = JSON.stringify(body);
        if (text.includes(keyOf(1))) return { status: 400, message: 'bad prompt' };
        if (text.includes(keyOf(2))) return { status: 500, type: provider === 'openai' ? 'server_error' : 'api_error', message: 'boom' };
        if (text.includes(keyOf(3))) return 'expired';
        return 'answer';
      });
      const file = storeFile();
      const first = await openRun(file);
      const summary = await runCellsBatch(first.store, first.runId, specs, batchOptions);
      expect(summary).toMatchObject({ done: 2, failed: 3, pending: 0 });
      expect(summary.results.map((r) => [r.status, r.errorClass])).toEqual([
        ['done', null],
        ['failed', 'bad_request'],
        ['failed', 'server'],
        ['failed', 'batch_expired'],
        ['done', null],
      ]);
      expect(summary.results[1]!.errorMessage).toContain('bad prompt');
      await first.store.close();

      // A later run resubmits the failed cells (the default for failed cells), never the answered ones.
      server.setLineOutcome(undefined);
      const second = await openRun(file);
      const again = await runCellsBatch(second.store, second.runId, specs, batchOptions);
      expect(again).toMatchObject({ done: 3, failed: 0, cached: 2 });
      expect(server.batches).toHaveLength(2);
      expect(server.batches[1]!.customIds).toEqual([1, 2, 3].map((i) => summary.results[i]!.key));
      expect(again.results.every((r) => r.status === 'done')).toBe(true);
      await second.store.close();
    });

    it('after a kill, collects the recorded job and never submits its cells again', async () => {
      const server = await fake({ provider, pollsUntilDone: 1 });
      const file = storeFile();
      await expectStopAfterSubmitResumes(() => openRun(file), server, makeSpecs(4, `${provider}:model-x@${server.baseURL}`), batchOptions);
    });
  });
}

describe('--batch runner', () => {
  it('releases a job that has no batch id (killed inside the create call) and submits its cells again', async () => {
    const server = await fake({ provider: 'openai' });
    const file = storeFile();
    await expectJobWithoutBatchIdReleased(() => openRun(file), server, makeSpecs(2, `openai:model-x@${server.baseURL}`), batchOptions);
  });

  it('on start collects the open jobs of this run and of its cells, and leaves other runs’ jobs alone', async () => {
    const server = await fake({ provider: 'openai', pollsUntilDone: 100 });
    const file = storeFile();
    const { store, runId } = await openRun(file);
    const other = await store.createRun(TEST_MANIFEST, { id: 'other-run' });
    const controller = new AbortController();
    const notify = (line: string) => {
      if (line.startsWith('batch: submitted')) controller.abort();
    };
    // Another run leaves a job open (stopped while it waited).
    await runCellsBatch(store, other, makeSpecs(2, `openai:other@${server.baseURL}`), { ...batchOptions, signal: controller.signal, notify });
    expect(await new BatchJobs(store.db).open()).toHaveLength(1);
    const otherPolls = server.batches[0]!.polls;
    const summary = await runCellsBatch(store, runId, makeSpecs(2, `openai:mine@${server.baseURL}`), batchOptions);
    expect(summary).toMatchObject({ done: 2 });
    expect(server.batches[0]!.polls).toBe(otherPolls);
    const jobs = await new BatchJobs(store.db).all();
    expect(jobs.map((j) => [j.runId, j.status])).toEqual([
      ['other-run', 'submitted'],
      ['batch-test', 'collected'],
    ]);
    await store.close();
  });

  it('runs cells of providers without a batch API online, with a one-line notice', async () => {
    const server = await fake({ provider: 'anthropic' });
    const specs: CellSpec[] = [...makeSpecs(2, `anthropic:model-x@${server.baseURL}`), ...makeSpecs(3, 'sim:echo')];
    const { store, runId } = await openRun(storeFile());
    const notes: string[] = [];
    const summary = await runCellsBatch(store, runId, specs, { ...batchOptions, notify: (line) => notes.push(line) });
    expect(summary).toMatchObject({ done: 5, failed: 0, pending: 0 });
    expect(notes.filter((n) => n.includes('no batch API'))).toEqual(['--batch: sim:echo has no batch API; running 3 cells online']);
    expect(server.batches[0]!.customIds).toHaveLength(2);
    await store.close();
  });

  it('reserves the worst case of every cell against --max-cost before submitting', async () => {
    const server = await fake({ provider: 'openai' });
    // Each cell: maxTokens 64 → worst case about (10 + 64×4) / 1e6 × 0.5 ≈ $0.000133.
    const specs = makeSpecs(10, `openai:model-x@${server.baseURL}`);
    const { store, runId } = await openRun(storeFile());
    const summary = await runCellsBatch(store, runId, specs, { ...batchOptions, maxCostUsd: 0.0005 });
    expect(summary.stopReason).toBe('budget');
    const submitted = server.batches[0]!.customIds.length;
    expect(submitted).toBeGreaterThan(0);
    expect(submitted).toBeLessThan(10);
    expect(summary).toMatchObject({ done: submitted, pending: 10 - submitted });
    expect(summary.spendUsd).toBeLessThanOrEqual(0.0005);
    await store.close();
  });

  it('splits a model’s cells at the provider’s line limit and at --max-batch-bytes', async () => {
    const server = await fake({ provider: 'anthropic' });
    const specs = makeSpecs(5, `anthropic:model-x@${server.baseURL}`);
    const { store, runId } = await openRun(storeFile());
    const summary = await runCellsBatch(store, runId, specs, {
      ...batchOptions,
      batchClientFor: (endpoint) => Object.assign(Object.create(createBatchClient(endpoint)) as BatchClient, { maxLines: 2 }),
    });
    expect(summary).toMatchObject({ done: 5 });
    expect(server.batches.map((b) => b.customIds.length)).toEqual([2, 2, 1]);
    const bySize = await openRun(storeFile());
    await runCellsBatch(bySize.store, bySize.runId, makeSpecs(3, `anthropic:model-y@${server.baseURL}`), { ...batchOptions, maxBatchBytes: 10 });
    expect(server.batches.slice(3).map((b) => b.customIds.length)).toEqual([1, 1, 1]);
    await store.close();
    await bySize.store.close();
  });

  it('a batch that fails as a whole fails its cells with the provider’s reason; the next run submits them again', async () => {
    const server = await fake({ provider: 'openai', failBatches: { code: 'token_limit_exceeded', message: 'Enqueued token limit reached' } });
    const specs = makeSpecs(3, `openai:model-x@${server.baseURL}`);
    const file = storeFile();
    const first = await openRun(file);
    const summary = await runCellsBatch(first.store, first.runId, specs, batchOptions);
    expect(summary).toMatchObject({ done: 0, failed: 3 });
    expect(summary.results.every((r) => r.errorClass === 'batch_failed')).toBe(true);
    expect(summary.results[0]!.errorMessage).toMatch(/token_limit_exceeded: Enqueued token limit reached/);
    expect((await new BatchJobs(first.store.db).all()).map((j) => j.status)).toEqual(['failed']);
    await first.store.close();
    expect(server.batches).toHaveLength(1);
    const second = await openRun(file);
    await runCellsBatch(second.store, second.runId, specs, batchOptions);
    expect(server.batches).toHaveLength(2);
    expect([...server.submissions.values()]).toEqual([2, 2, 2]);
    await second.store.close();
  });

  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: a failed results download is tried again at the next poll`, async () => {
      const server = await fake({ provider, failResultDownloads: 2 });
      const specs = makeSpecs(3, `${provider}:model-x@${server.baseURL}`);
      const { store, runId } = await openRun(storeFile());
      const notes: string[] = [];
      const summary = await runCellsBatch(store, runId, specs, { ...batchOptions, notify: (line) => notes.push(line) });
      expect(summary).toMatchObject({ status: 'done', done: 3 });
      expect(notes.filter((n) => n.includes('reading the results'))).toHaveLength(2);
      expect(server.batches).toHaveLength(1);
      await store.close();
    });
  }

  it('stops with the provider’s auth error when the batch endpoint refuses the key', async () => {
    const server = await fake({ provider: 'openai', apiKey: 'the-right-key-1234' });
    const specs = makeSpecs(2, `openai:model-x@${server.baseURL}`);
    const { store, runId } = await openRun(storeFile());
    const error = await runCellsBatch(store, runId, specs, batchOptions).catch((e: unknown) => e);
    expect(error).toMatchObject({ errorKind: 'auth' });
    expect((await new BatchJobs(store.db).all()).map((j) => j.status)).toEqual(['failed']);
    expect((await store.getRun(runId))!.status).toBe('failed');
    await store.close();
  });
});
