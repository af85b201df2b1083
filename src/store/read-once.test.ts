import { describe, expect, it, vi } from 'vitest';
import { readOnce } from './read-once.js';
import { SqliteRunStore } from './run-store.js';
import { makeSpecs, TEST_MANIFEST } from './testing/fakes.js';

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

    const calls = getRun.mock.calls.length;
    expect((await view.getRun(runId))?.id).toBe('run-a');
    expect((await view.getRun(runId))?.id).toBe('run-a');
    expect(getRun.mock.calls.length).toBe(calls + 1);
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

  it('keeps no failed read: an unknown run fails every time', async () => {
    const store = SqliteRunStore.open(':memory:');
    const view = readOnce(store);
    await expect(view.requireRun('nope')).rejects.toThrow(/nope/);
    await store.createRun(TEST_MANIFEST, { id: 'nope' });
    expect((await view.requireRun('nope')).id).toBe('nope');
    await store.close();
  });
});
