import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type FakeBatchServer, startFakeBatch } from '../../models/testing/index.js';
import { runCellsBatch } from '../../store/batch-runner.js';
import { RunStore } from '../../store/run-store.js';
import { makeSpecs, TEST_MANIFEST } from '../../store/testing/fakes.js';
import { runCliInProcess } from '../testing/run-cli.js';

const env = { OPENAI_API_KEY: 'sk-cancel-cli', ANTHROPIC_API_KEY: 'ak-cancel-cli' };
let server: FakeBatchServer | undefined;
let dir: string | undefined;
afterEach(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
  server = undefined;
});

/** A store whose run stopped (Ctrl-C) while its batch was still processing. */
async function storeWithOpenBatch(provider: 'openai' | 'anthropic'): Promise<string> {
  server = await startFakeBatch({ provider, pollsUntilDone: 1000, apiKey: provider === 'openai' ? env.OPENAI_API_KEY : env.ANTHROPIC_API_KEY });
  dir = mkdtempSync(join(tmpdir(), 'echolens-cancel-cli-'));
  const file = join(dir, 'runs.db');
  const store = RunStore.open(file, { env: {} });
  const runId = await store.createRun(TEST_MANIFEST, { id: 'waiting' });
  const stop = new AbortController();
  await runCellsBatch(store, runId, makeSpecs(3, `${provider}:model-x@${server.baseURL}`), {
    env,
    costOf: () => 0,
    pollIntervalMs: 0,
    sleep: async () => {},
    signal: stop.signal,
    notify: (line) => {
      if (line.startsWith('batch: submitted')) stop.abort();
    },
  });
  await store.close();
  return file;
}

describe('echolens runs cancel-batches', () => {
  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: cancels the open batches at the provider and leaves the jobs for the next run to collect`, async () => {
      const file = await storeWithOpenBatch(provider);
      const result = await runCliInProcess(['runs', 'cancel-batches', file], env);
      expect(result.code).toBe(0);
      expect(result.stdout).toMatch(new RegExp(`cancelled ${provider} \\S+_fake_0 \\(${provider}:model-x@.*, run waiting, 3 cells\\)`));
      expect(result.stdout).toMatch(/1 of 1 open batches cancelled/);
      expect(server!.batches.map((b) => b.canceled)).toEqual([true]);
      const store = RunStore.open(file, { env: {} });
      expect(await store.batchJobs().open()).toHaveLength(1);
      await store.close();
    });
  }

  it('says so when there is nothing to cancel, and refuses an unknown run', async () => {
    dir = mkdtempSync(join(tmpdir(), 'echolens-cancel-cli-'));
    const file = join(dir, 'runs.db');
    await RunStore.open(file, { env: {} }).close();
    const empty = await runCliInProcess(['runs', 'cancel-batches', file], env);
    expect(empty).toMatchObject({ code: 0 });
    expect(empty.stdout).toMatch(/no open batches in/);
    const unknown = await runCliInProcess(['runs', 'cancel-batches', file, '--run', 'nope'], env);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toMatch(/nope/);
  });

  it('exits 1 naming the batch when the provider refuses the cancel', async () => {
    const file = await storeWithOpenBatch('openai');
    const result = await runCliInProcess(['runs', 'cancel-batches', file], { OPENAI_API_KEY: 'sk-wrong' });
    expect(result.stdout).toMatch(/could not cancel openai batch_fake_0/);
    expect(result.code).toBe(1);
  });
});
