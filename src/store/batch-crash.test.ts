import { spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { type FakeBatchServer, startFakeBatch } from '../models/testing/index.js';
import { runCellsBatch } from './batch-runner.js';
import { RunStore } from './run-store.js';
import { storeBackends } from './testing/backends.js';
import { makeSpecs } from './testing/fakes.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'testing', 'batch-crash-child.ts');

describe.each(storeBackends())('--batch after SIGKILL ($name)', (backend) => {
  let server: FakeBatchServer | undefined;
  beforeAll(() => (backend.available ? backend.setup() : undefined), 120_000);
  afterEach(async () => {
    await server?.close();
  });
  afterAll(() => backend.teardown());

  it.skipIf(!backend.available)(
    'a killed batch run is collected by the next run; the server sees every custom_id once',
    async () => {
      server = await startFakeBatch({ provider: 'openai', pollsUntilDone: 1 });
      const file = backend.location('batch_kill');
      const model = `openai:model-x@${server.baseURL}`;
      const env = { ...process.env, OPENAI_API_KEY: 'sk-kill-test' };
      await new Promise<void>((resolve, reject) => {
        const child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, 'kill-run', model, '7'], {
          cwd: packageRoot(),
          env,
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let out = '';
        let err = '';
        child.stdout.on('data', (chunk: Buffer) => {
          out += chunk.toString();
          if (out.includes('submitted')) child.kill('SIGKILL');
        });
        child.stderr.on('data', (chunk: Buffer) => {
          err += chunk.toString();
        });
        child.on('error', reject);
        child.on('close', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child ended without the kill: ${out} ${err}`))));
      });
      expect(server.batches).toHaveLength(1);

      const store = RunStore.open(file, { env: {} });
      expect((await store.batchJobs().open()).map((job) => job.status)).toEqual(['submitted']);
      const summary = await runCellsBatch(store, 'kill-run', makeSpecs(7, model), {
        env: { OPENAI_API_KEY: 'sk-kill-test' },
        pollIntervalMs: 0,
        sleep: async () => {},
        costOf: () => 0,
      });
      expect(summary).toMatchObject({ status: 'done', done: 7, pending: 0 });
      expect(server.batches).toHaveLength(1);
      expect([...server.submissions.values()]).toEqual([1, 1, 1, 1, 1, 1, 1]);
      expect(server.online.requests).toHaveLength(7);
      await store.close();
    },
    120_000,
  );
});
