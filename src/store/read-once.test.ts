import { describe, expect, it, vi } from 'vitest';
import { readOnce } from './read-once.js';
import { SqliteRunStore } from './run-store.js';
import { makeSpecs, TEST_MANIFEST } from './testing/fakes.js';

describe('readOnce: a report reads the run and its cells once', () => {
  it('answers repeated reads from the first, per argument list, and passes everything else through', () => {
    const store = SqliteRunStore.open(':memory:');
    const runId = store.createRun(TEST_MANIFEST, { id: 'run-a' });
    store.registerCells(runId, makeSpecs(3));
    const getRun = vi.spyOn(store, 'getRun');
    const cellResults = vi.spyOn(store, 'cellResultsOfRun');
    const view = readOnce(store);

    const first = view.cellResultsOfRun(runId);
    const second = view.cellResultsOfRun(runId);
    expect(second).toEqual(first);
    expect(first).toHaveLength(3);
    expect(cellResults).toHaveBeenCalledTimes(1);
    // A fresh array each time: a caller that sorts or trims its list does not change the next caller's.
    expect(second).not.toBe(first);
    first.pop();
    expect(view.cellResultsOfRun(runId)).toHaveLength(3);
    // Another argument list is another read.
    expect(view.cellResultsOfRun(runId, { status: 'pending' })).toHaveLength(3);
    expect(cellResults).toHaveBeenCalledTimes(2);

    const calls = getRun.mock.calls.length;
    expect(view.getRun(runId)?.id).toBe('run-a');
    expect(view.getRun(runId)?.id).toBe('run-a');
    expect(getRun.mock.calls.length).toBe(calls + 1);
    // After the list, a listed run is answered from it.
    const other = store.createRun(TEST_MANIFEST, { id: 'run-b' });
    const fresh = readOnce(store);
    expect(fresh.listRuns().map((r) => r.id)).toContain(other);
    const before = getRun.mock.calls.length;
    expect(fresh.requireRun(other).id).toBe(other);
    expect(fresh.getRun('run-a')?.id).toBe('run-a');
    expect(getRun.mock.calls.length).toBe(before);
    // Unlisted methods go to the store itself.
    expect(view.resultsOfRun(runId).size).toBe(3);
    expect(view.backend).toBe('sqlite');
    store.close();
  });

  it('keeps no failed read: an unknown run fails every time', () => {
    const store = SqliteRunStore.open(':memory:');
    const view = readOnce(store);
    expect(() => view.requireRun('nope')).toThrow(/nope/);
    store.createRun(TEST_MANIFEST, { id: 'nope' });
    expect(view.requireRun('nope').id).toBe('nope');
    store.close();
  });
});
