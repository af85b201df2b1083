import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { incompleteRunMessage, stageProgressText, stageShortfall } from '../experiment/run-completeness.js';
import { RunStore, SqliteRunStore } from './run-store.js';
import { stageComplete } from './run-stages.js';
import { SCHEMA_VERSION } from './schema.js';
import { TEST_MANIFEST } from './testing/fakes.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';
import { oldStoreWithDoneRun } from './testing/old-schema.js';

const tmp = useTempDir('echolens-stages-', 'test');

/** One run in a fresh store at the same path; the store is closed however the body ends. */
async function withRun(body: (store: RunStore, id: string) => Promise<void>): Promise<void> {
  const store = RunStore.open(join(tmp.path, 'run.db'));
  try {
    await body(store, await store.createRun(TEST_MANIFEST));
  } finally {
    await store.close();
  }
}

describe('run stages in the store', () => {
  it('keeps a run running while a declared stage is incomplete, whoever writes done', async () => {
    await withRun(async (store, id) => {
      await store.declareStages(id, [
        { name: 'generation', expected: 3 },
        { name: 'labeling', expected: 3 },
      ]);
      await store.recordStage(id, 'generation', { expected: 3, registered: 3, settled: 3 });
      // What the runner writes at the end of the generation stage.
      await store.setRunStatus(id, 'done');
      expect((await store.requireRun(id)).status).toBe('running');
      // A stop is recorded as it is (only `done` waits for the stages).
      await store.setRunStatus(id, 'interrupted');
      expect((await store.requireRun(id)).status).toBe('interrupted');
      await store.recordStage(id, 'labeling', { expected: 3, registered: 3, settled: 2 });
      await store.setRunStatus(id, 'done');
      expect((await store.requireRun(id)).status).toBe('running');
      await store.recordStage(id, 'labeling', { expected: 3, registered: 3, settled: 3 });
      await store.setRunStatus(id, 'done');
      expect((await store.requireRun(id)).status).toBe('done');
    });
  });

  it('orders declared stages first and appends undeclared ones; a re-declaration updates only stages not started', async () => {
    await withRun(async (store, id) => {
      await store.declareStages(id, [
        { name: 'a', expected: 2 },
        { name: 'b', expected: null },
      ]);
      await store.recordStage(id, 'extra', { expected: 1, registered: 1, settled: 1 });
      await store.recordStage(id, 'a', { expected: 2, registered: 2, settled: 1 });
      await store.declareStages(id, [
        { name: 'a', expected: 5 },
        { name: 'b', expected: 7 },
      ]);
      expect((await store.stages(id)).map((s) => [s.stage, s.ordinal, s.expected, s.registered, s.settled])).toEqual([
        ['a', 0, 2, 2, 1],
        ['b', 1, 7, 0, 0],
        ['extra', 2, 1, 1, 1],
      ]);
      // Deleting the run deletes its stages (the foreign key would refuse otherwise).
      await store.deleteRun(id);
      expect(await store.stages(id)).toEqual([]);
    });
  });

  it('treats a run recorded before stages existed by its status alone (a v4 store migrates to v5 with the ledger)', async () => {
    const file = join(tmp.path, 'old.db');
    // A schema-4 store: no ledger table.
    const id = await oldStoreWithDoneRun(file, 4, 'DROP TABLE run_stages');
    const reader = RunStore.open(file, { readonly: true });
    expect(await reader.stages(id)).toEqual([]);
    expect(incompleteRunMessage(await reader.requireRun(id), await reader.stages(id))).toBeNull();
    await reader.close();
    const writer = SqliteRunStore.open(file);
    try {
      expect(Number(writer.db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get())).toBe(SCHEMA_VERSION);
      expect((await writer.requireRun(id)).status).toBe('done');
      await writer.recordStage(id, 'x', { expected: 1, registered: 0, settled: 0 });
      expect(await writer.stages(id)).toHaveLength(1);
    } finally {
      await writer.close();
    }
  });
});

describe('incomplete-run messages', () => {
  const stage = (s: string, expected: number | null, registered: number, settled: number) => ({
    stage: s,
    ordinal: 0,
    expected,
    registered,
    settled,
    updatedAt: '',
  });

  it('names the first stage short of its cells, in the form the gate prints', () => {
    expect(incompleteRunMessage({ status: 'running' }, [stage('generation', 960, 960, 960), stage('labeling', 960, 0, 0)])).toBe(
      'incomplete run: stage labeling has 0 of 960 cells — re-run the same command to finish',
    );
    expect(stageShortfall(stage('labeling', 960, 960, 700))).toBe('stage labeling has 700 of 960 cells settled');
    expect(stageShortfall(stage('judge', null, 0, 0))).toBe('stage judge has not started');
    expect(stageShortfall(stage('judge', 0, 0, 0))).toBeNull();
    expect(stageComplete(stage('judge', 0, 0, 0))).toBe(true);
  });

  it('falls back to the status for runs without stages, and is null for a complete run', () => {
    expect(incompleteRunMessage({ status: 'interrupted' }, [])).toBe('incomplete run: its status is interrupted — re-run the same command to finish');
    expect(incompleteRunMessage({ status: 'done' }, [])).toBeNull();
    expect(incompleteRunMessage({ status: 'done' }, [stage('a', 2, 2, 2)])).toBeNull();
  });

  it('shows progress per stage for listings', () => {
    expect(stageProgressText([stage('generation', 960, 960, 900), stage('labeling', 960, 0, 0), stage('judge', null, 0, 0)])).toBe(
      'generation 900/960 · labeling 0/960 registered · judge 0/? registered',
    );
  });
});
