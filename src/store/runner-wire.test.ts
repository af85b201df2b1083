import { afterEach, describe, expect, it } from 'vitest';
import { createAdapter } from '../models/index.js';
import { type FakeServer, lastUserText, startFakeOpenAI } from '../models/testing/index.js';
import { RunStore } from './run-store.js';
import { FatalBurstError, runCells } from './runner.js';
import { makeSpecs, TEST_MANIFEST } from './testing/fakes.js';

// The runner against the real adapter over HTTP (127.0.0.1 fake OpenAI-compatible server).
let server: FakeServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

function setup() {
  const store = RunStore.open(':memory:');
  return { store, runId: store.createRun(TEST_MANIFEST) };
}

describe('runCells over the OpenAI wire format', () => {
  it('waits the Retry-After of a real 429, retries a 503, and stores the answers', async () => {
    server = await startFakeOpenAI({
      respond: (request) => ({ text: `echo ${lastUserText(request)}` }),
      faults: [
        { fault: 'status', status: 429, retryAfter: '3' },
        { fault: 'status', status: 503, retryAfterMs: '250' },
      ],
    });
    const { store, runId } = setup();
    const waits: number[] = [];
    const ref = `vllm:fake-model@${server.baseURL}`;
    const summary = await runCells(store, runId, makeSpecs(3, ref), {
      adapterFor: (model) => createAdapter(model),
      concurrency: 1,
      sleep: async (ms) => void waits.push(ms),
    });
    expect(summary).toMatchObject({ done: 3, failed: 0, calls: 5 });
    expect(waits).toEqual([3000, 250]);
    expect(summary.results[0]).toMatchObject({ status: 'done', attempts: 3, text: 'echo Question number 0?' });
    expect(server.requests).toHaveLength(5);
  });

  it('stops on repeated 401s with the provider’s message and never retries them', async () => {
    server = await startFakeOpenAI({ apiKey: 'right-key-123456' });
    const { store, runId } = setup();
    const waits: number[] = [];
    const error = await runCells(store, runId, makeSpecs(10, `vllm:fake-model@${server.baseURL}`), {
      adapterFor: (model) => createAdapter(model, { env: { VLLM_API_KEY: 'wrong-key-654321' } }),
      concurrency: 1,
      sleep: async (ms) => void waits.push(ms),
    }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FatalBurstError);
    expect((error as FatalBurstError).errorKind).toBe('auth');
    expect(server.requests).toHaveLength(3);
    expect(waits).toEqual([]);
    expect(JSON.stringify(store.cellsOfRun(runId))).not.toContain('wrong-key-654321');
  });
});
