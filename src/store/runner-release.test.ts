import { describe, expect, it } from 'vitest';
import { ModelCallError } from '../models/errors.js';
import { cellKey } from './keys.js';
import { RunStore } from './run-store.js';
import { runCells } from './runner.js';
import { FakeModels, makeSpecs, TEST_MANIFEST } from './testing/fakes.js';

/** A provider slot is held for the call, not for the store write after it (issue 34). */
describe('runCells: slots and store writes', () => {
  it('starts the next call as soon as an answer arrives, before that answer is committed', async () => {
    const store = RunStore.open(':memory:');
    const runId = store.createRun(TEST_MANIFEST);
    const specs = makeSpecs(4);
    const keys = specs.map((spec) => cellKey(spec.request));
    // At each call's start: is the previous cell already written?
    const previousCommitted: boolean[] = [];
    const models = new FakeModels({
      onCall: (key) => {
        const index = keys.indexOf(key);
        if (index > 0) previousCommitted.push(store.getCell(keys[index - 1]!)?.status === 'done');
      },
    });
    const result = await runCells(store, runId, specs, { adapterFor: models.adapterFor, concurrency: 1, costOf: () => 0 });
    expect(result.done).toBe(4);
    expect(models.maxActive).toBe(1);
    expect(previousCommitted).toEqual([false, false, false]);
    // Every answer still reaches the store before runCells returns.
    for (const key of keys) expect(store.getCell(key)?.status).toBe('done');
  });

  it('keeps the slot of a failed call until it is counted, so a fatal burst stops the run on time', async () => {
    const store = RunStore.open(':memory:');
    const runId = store.createRun(TEST_MANIFEST);
    const models = new FakeModels({
      respond: () => {
        throw new ModelCallError('auth', 'bad key', { status: 401 });
      },
    });
    const error = (await runCells(store, runId, makeSpecs(10), { adapterFor: models.adapterFor, concurrency: 1, costOf: () => 0 }).catch(
      (e: unknown) => e,
    )) as { summary?: { failed: number; pending: number } };
    expect(models.totalCalls).toBe(3);
    expect(error.summary).toMatchObject({ failed: 3, pending: 7 });
  });
});
