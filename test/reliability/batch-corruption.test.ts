// Batch integrity (issue 29 item 2): every kind of corrupted results file, and a SIGKILL inside
// the batch create call, against the fake batch servers of both wire formats. For each kind the
// store must end with no cell whose answer is a guess: every readable, unambiguous line stored,
// every other cell failed with its reason, no custom_id submitted twice, and no endless loop.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';
import { lastUserText, startFakeBatch } from '../../src/models/testing/index.js';
import { runCellsBatch } from '../../src/store/batch-runner.js';
import { RunStore } from '../../src/store/run-store.js';
import { makeSpecs, TEST_MANIFEST } from '../../src/store/testing/fakes.js';
import { SEED, seeded, size } from './size.js';

const CHILD = join(packageRoot(), 'src', 'store', 'testing', 'batch-crash-child.ts');
const env = { OPENAI_API_KEY: 'sk-reliability', ANTHROPIC_API_KEY: 'ak-reliability' };
const dir = mkdtempSync(join(tmpdir(), 'echolens-batch-reliability-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Provider = 'openai' | 'anthropic';
const idOf = (line: string) => (JSON.parse(line) as { custom_id: string }).custom_id;
const errorLine = (provider: Provider, id: string) =>
  provider === 'openai'
    ? JSON.stringify({
        id: 'batch_req_e',
        custom_id: id,
        response: { status_code: 500, request_id: 'r', body: { error: { message: 'late error', type: 'server_error' } } },
        error: null,
      })
    : JSON.stringify({ custom_id: id, result: { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: 'late error' } } } });

/** A corruption: how it rewrites the results lines (given the line picked), and what the picked cell must end as. */
interface Corruption {
  name: string;
  mangle(lines: string[], picked: number, provider: Provider): string[];
  /** Error class of the picked cell, or null when it must be answered. */
  pickedClass: string | null;
  /** The run ends with an error (the unreadable kind), not a summary. */
  throws?: string;
}

const CORRUPTIONS: Corruption[] = [
  {
    name: 'invalid JSON line',
    mangle: (l, p) => l.map((x, i) => (i === p ? x.slice(0, x.length >> 1) : x)),
    pickedClass: 'batch_unreadable',
    throws: 'batch_unreadable',
  },
  { name: 'identical duplicate', mangle: (l, p) => [...l, l[p]!], pickedClass: null },
  { name: 'conflicting duplicate', mangle: (l, p) => [...l, l[p]!.replace('answer to', 'another answer to')], pickedClass: 'batch_conflict' },
  { name: 'error after success', mangle: (l, p, provider) => [...l, errorLine(provider, idOf(l[p]!))], pickedClass: 'batch_conflict' },
];

describe('batch results corruption', () => {
  const rounds = size(2, 12);
  const random = seeded(SEED);
  for (const provider of ['openai', 'anthropic'] as const) {
    for (const corruption of CORRUPTIONS) {
      it(`${provider}: ${corruption.name} (${rounds} rounds, seed ${SEED})`, async () => {
        for (let round = 0; round < rounds; round += 1) {
          const cells = 3 + Math.floor(random() * 6);
          const picked = Math.floor(random() * cells);
          let pickedId = '';
          const server = await startFakeBatch({
            provider,
            respond: (request) => ({ text: `answer to ${lastUserText(request)}` }),
            mangleResults: (lines) => {
              pickedId = idOf(lines[picked]!);
              return corruption.mangle(lines, picked, provider);
            },
          });
          const store = RunStore.open(join(dir, `${provider}-${corruption.name.replaceAll(' ', '-')}-${round}.db`), { env: {} });
          try {
            const runId = await store.createRun(TEST_MANIFEST, { id: 'corrupt' });
            const outcome = await runCellsBatch(store, runId, makeSpecs(cells, `${provider}:m@${server.baseURL}`), {
              env,
              costOf: () => 0,
              pollIntervalMs: 0,
              sleep: async () => {},
            }).catch((error: unknown) => error as { errorKind?: string });
            if (corruption.throws) expect((outcome as { errorKind?: string }).errorKind).toBe(corruption.throws);
            else expect(outcome).toMatchObject({ status: 'done' });
            const results = (await store.cellsOfRun(runId)).map((c) => c.result);
            const pickedCell = results.find((r) => r.key === pickedId)!;
            if (corruption.pickedClass === null) expect(pickedCell.status).toBe('done');
            else expect(pickedCell).toMatchObject({ status: 'failed', errorClass: corruption.pickedClass, text: null });
            // Every other cell is answered with its own answer.
            for (const [index, result] of results.entries()) {
              if (result.key === pickedId) continue;
              expect(result).toMatchObject({ status: 'done', text: `answer to Question number ${index}?` });
            }
            expect([...server.submissions.values()].every((n) => n === 1)).toBe(true);
            expect(await store.batchJobs().open()).toHaveLength(0);
          } finally {
            await store.close();
            await server.close();
          }
        }
      }, 120_000);
    }
  }
});

describe('SIGKILL inside the batch create call', () => {
  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: the resumed run finds the batch the killed one created and submits nothing twice`, async () => {
      let child: ReturnType<typeof spawn> | undefined;
      const server = await startFakeBatch({
        provider,
        pollsUntilDone: 1,
        // The provider has made the batch; the client dies before it hears the id.
        holdCreate: async () => {
          child?.kill('SIGKILL');
          await new Promise((resolve) => setTimeout(resolve, 50));
        },
      });
      try {
        const file = join(dir, `kill-create-${provider}.db`);
        const model = `${provider}:model-x@${server.baseURL}`;
        await new Promise<void>((resolve, reject) => {
          child = spawn(process.execPath, ['--import', 'tsx', CHILD, file, 'kill-create', model, '6'], {
            cwd: packageRoot(),
            env: { ...process.env, ...env },
            stdio: ['ignore', 'pipe', 'pipe'],
          });
          let err = '';
          child.stderr?.on('data', (chunk: Buffer) => {
            err += chunk.toString();
          });
          child.on('error', reject);
          child.on('close', (_code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child ended without the kill: ${err}`))));
        });
        expect(server.batches).toHaveLength(1);
        const store = RunStore.open(file, { env: {} });
        expect((await store.batchJobs().open()).map((job) => [job.status, job.batchId])).toEqual([['submitting', null]]);
        const summary = await runCellsBatch(store, 'kill-create', makeSpecs(6, model), { env, pollIntervalMs: 0, sleep: async () => {}, costOf: () => 0 });
        expect(summary).toMatchObject({ status: 'done', done: 6, pending: 0 });
        expect(server.batches).toHaveLength(1);
        expect([...server.submissions.values()]).toEqual([1, 1, 1, 1, 1, 1]);
        expect(server.online.requests).toHaveLength(6);
        await store.close();
      } finally {
        await server.close();
      }
    }, 120_000);
  }
});
