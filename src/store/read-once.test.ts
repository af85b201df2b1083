import { describe, expect, it, vi } from 'vitest';
import { readOnce } from './read-once.js';
import { type CellOutcome, SqliteRunStore } from './run-store.js';
import { makeSpecs, TEST_MANIFEST, testOutcome } from './testing/fakes.js';

const outcome = (status: CellOutcome['status'], text: string | null): CellOutcome => testOutcome({ status, text });

describe('readOnce: a report reads the run and its cells once', () => {
  it('answers repeated reads from the first, per argument list, and passes everything else through', async () => {
    const store = SqliteRunStore.open(':memory:');
    const runId = await store.createRun(TEST_MANIFEST, { id: 'run-a' });
    await store.registerCells(runId, makeSpecs(3));
    const getRun = vi.spyOn(store, 'getRun');
    const cellResults = vi.spyOn(store, 'cellResultsOfRun');
    const view = readOnce(store);

    const first = await view.cellResultsOfRun(runId);
    const second = await view.cellResultsOfRun(runId);
    expect(second).toEqual(first);
    expect(first).toHaveLength(3);
    expect(cellResults).toHaveBeenCalledTimes(1);
    // A fresh array each time: a caller that sorts or trims its list does not change the next caller's.
    expect(second).not.toBe(first);
    first.pop();
    expect(await view.cellResultsOfRun(runId)).toHaveLength(3);
    // Another argument list is another read.
    expect(await view.cellResultsOfRun(runId, { status: 'pending' })).toHaveLength(3);
    expect(cellResults).toHaveBeenCalledTimes(2);

    // A run is read without the store's count: its counts come from the cells already read, and match the store's.
    const calls = getRun.mock.calls.length;
    expect((await view.getRun(runId))?.id).toBe('run-a');
    expect((await view.getRun(runId))?.counts).toEqual((await store.getRun(runId))?.counts);
    expect(getRun.mock.calls.length).toBe(calls + 1);
    expect(cellResults).toHaveBeenCalledTimes(2);
    // After the list, a listed run is answered from it.
    const other = await store.createRun(TEST_MANIFEST, { id: 'run-b' });
    const fresh = readOnce(store);
    expect((await fresh.listRuns()).map((r) => r.id)).toContain(other);
    const before = getRun.mock.calls.length;
    expect((await fresh.requireRun(other)).id).toBe(other);
    expect((await fresh.getRun('run-a'))?.id).toBe('run-a');
    expect(getRun.mock.calls.length).toBe(before);
    // Unlisted methods go to the store itself.
    expect((await view.resultsOfRun(runId)).size).toBe(3);
    expect(view.backend).toBe('sqlite');
    await store.close();
  });

  it('counts a run from its cells as the store does, status by status, in the same key order', async () => {
    const store = SqliteRunStore.open(':memory:');
    const runId = await store.createRun(TEST_MANIFEST, { id: 'run-c' });
    const [done, failed] = await store.registerCells(runId, makeSpecs(4));
    await store.recordResult(done as string, outcome('done', 'x'));
    await store.recordResult(failed as string, { ...outcome('failed', null), errorClass: 'server', errorMessage: 'no' });
    const counted = await store.getRun(runId);
    const getRun = vi.spyOn(store, 'getRun');
    const view = readOnce(store);
    const viewed = await view.requireRun(runId);
    expect(getRun).not.toHaveBeenCalled();
    expect(JSON.stringify(viewed)).toBe(JSON.stringify(counted));
    expect(viewed.counts).toMatchObject({ done: 1, failed: 1, pending: 2, total: 4 });
    expect((await view.listRunHeads()).map((r) => [r.id, 'counts' in r])).toEqual([[runId, false]]);
    await store.close();
  });

  it('keeps no failed read: an unknown run fails every time', async () => {
    const store = SqliteRunStore.open(':memory:');
    const view = readOnce(store);
    await expect(view.requireRun('nope')).rejects.toThrow(/nope/);
    await store.createRun(TEST_MANIFEST, { id: 'nope' });
    expect((await view.requireRun('nope')).id).toBe('nope');
    await store.close();
  });
});
