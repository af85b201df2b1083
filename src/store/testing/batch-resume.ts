import { expect } from 'vitest';
import type { FakeBatchServer } from '../../models/testing/index.js';
import { runCellsBatch } from '../batch-runner.js';
import type { RunCellsBatchOptions } from '../batch-session.js';
import type { RunStore } from '../run-store.js';
import type { CellSpec } from '../types.js';

/**
 * The two `--batch` resume cases, written once for the fast SQLite tests (batch-runner.test.ts)
 * and the both-backends tier (resume-backends.slow.test.ts). `openRun` opens the same run of
 * the same store each time it is called, as a restarted process would.
 */
type OpenRun = () => Promise<{ store: RunStore; runId: string }>;

/** Stopped right after the job was submitted: the next run collects it and submits nothing again. */
export async function expectStopAfterSubmitResumes(
  openRun: OpenRun,
  server: FakeBatchServer,
  specs: readonly CellSpec[],
  options: RunCellsBatchOptions,
): Promise<void> {
  const first = await openRun();
  const controller = new AbortController();
  const stopped = await runCellsBatch(first.store, first.runId, specs, {
    ...options,
    signal: controller.signal,
    // Ctrl-C right after the job was submitted.
    notify: (line) => {
      if (line.startsWith('batch: submitted')) controller.abort();
    },
  });
  expect(stopped).toMatchObject({ status: 'interrupted', interrupted: true, done: 0, pending: specs.length });
  expect(await first.store.batchJobs().open()).toHaveLength(1);
  await first.store.close(); // the process dies here

  const notes: string[] = [];
  const second = await openRun();
  const resumed = await runCellsBatch(second.store, second.runId, specs, { ...options, notify: (line) => notes.push(line) });
  expect(resumed).toMatchObject({ status: 'done', done: specs.length, pending: 0 });
  expect(notes[0]).toMatch(new RegExp(`resuming .* batch .*${specs.length} cells`));
  expect(server.batches).toHaveLength(1);
  expect([...server.submissions.values()]).toEqual(specs.map(() => 1));
  expect(await second.store.batchJobs().open()).toHaveLength(0);
  await second.store.close();
}

/** A job recorded without a provider batch id (killed inside the create call) is abandoned and its cells submitted again. */
export async function expectJobWithoutBatchIdReleased(
  openRun: OpenRun,
  server: FakeBatchServer,
  specs: readonly CellSpec[],
  options: RunCellsBatchOptions,
): Promise<void> {
  const { store, runId } = await openRun();
  const keys = await store.registerCells(runId, specs);
  await store.batchJobs().begin(runId, 'openai', specs[0]!.request.model, keys);
  const notes: string[] = [];
  const summary = await runCellsBatch(store, runId, specs, { ...options, notify: (line) => notes.push(line) });
  expect(summary).toMatchObject({ done: specs.length });
  expect(notes[0]).toMatch(/no provider batch id/);
  expect((await store.batchJobs().all()).map((j) => j.status)).toEqual(['abandoned', 'collected']);
  expect(server.batches).toHaveLength(1);
  await store.close();
}
