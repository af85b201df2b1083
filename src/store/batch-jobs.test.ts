import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BatchJobs } from './batch-jobs.js';
import { SqliteRunStore } from './run-store.js';
import { SCHEMA_VERSION } from './schema.js';
import { rewindSchema } from './testing/old-schema.js';

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe('batch jobs table', () => {
  it('a version-2 store gains the batch tables on open', async () => {
    dir = mkdtempSync(join(tmpdir(), 'echolens-batch-jobs-'));
    const file = join(dir, 'runs.db');
    await SqliteRunStore.open(file, { env: {} }).close();
    rewindSchema(file, 2, 'DROP TABLE batch_job_cells; DROP TABLE batch_jobs;');
    const store = SqliteRunStore.open(file, { env: {} });
    expect(Number(store.db.prepare("SELECT value FROM meta WHERE name = 'schema_version'").pluck().get())).toBe(SCHEMA_VERSION);
    const jobs = new BatchJobs(store.db);
    const id = await jobs.begin('run-1', 'openai', 'openai:gpt-4.1-mini', ['k1', 'k2']);
    expect((await jobs.open()).map((j) => [j.status, j.batchId, j.keys])).toEqual([['submitting', null, ['k1', 'k2']]]);
    await jobs.submitted(id, 'batch_1');
    await jobs.observed(id, 'in_progress', '0/2 done');
    expect(await jobs.get(id)).toMatchObject({ status: 'submitted', batchId: 'batch_1', providerStatus: 'in_progress', note: '0/2 done', endedAt: null });
    await jobs.finish(id, 'collected');
    expect(await jobs.open()).toEqual([]);
    expect((await jobs.all('run-1'))[0]!.endedAt).not.toBeNull();
    await store.close();
  });
});
