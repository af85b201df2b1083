import { describe, expect, it } from 'vitest';
import { EcholensError } from '../core/errors.js';
import type { FakeBatchServer } from '../models/testing/index.js';
import { batchEndpointOf, createBatchClient, wireRequestOf } from '../models/batch/index.js';
import { batchTagOf } from './batch-resume.js';
import { BatchResultsError, runCellsBatch } from './batch-runner.js';
import { RunStore } from './run-store.js';
import { makeSpecs, TEST_MANIFEST } from './testing/fakes.js';
import { fakeBatchKit } from './testing/batch-kit.js';

// Issue 29 item 2: what a results file or a kill can do to a --batch run, against the fake batch servers.

const env = { OPENAI_API_KEY: 'sk-integrity-key', ANTHROPIC_API_KEY: 'ak-integrity-key' };
const batchOptions = { env, costOf: () => 0, pollIntervalMs: 0, sleep: async () => {} };

const { fake, storeFile } = fakeBatchKit('echolens-integrity-');

async function openRun(file?: string) {
  const path = file ?? storeFile();
  const store = RunStore.open(path, { env: {} });
  const runId = (await store.getRun('integrity')) ? 'integrity' : await store.createRun(TEST_MANIFEST, { id: 'integrity' });
  return { store, runId, file: path };
}

/** The custom_id of a results line (both wire formats put it at the top level). */
const idOf = (line: string) => (JSON.parse(line) as { custom_id: string }).custom_id;
const resultDownloads = (server: FakeBatchServer) =>
  server.requests.filter((r) => r.method === 'GET' && (/\/files\/.+\/content$/.test(r.path) || /\/results$/.test(r.path))).length;

for (const provider of ['openai', 'anthropic'] as const) {
  describe(`${provider}: results files read strictly`, () => {
    it('a line that stays unparseable: bounded re-reads, then a clear error; the valid lines are stored', async () => {
      let target = '';
      const server = await fake({
        provider,
        mangleResults: (lines) =>
          lines.map((line) => {
            if (target === '') target = idOf(line);
            return idOf(line) === target ? `${line.slice(0, 25)}\u0000garbage` : line;
          }),
      });
      const specs = makeSpecs(5, `${provider}:model-x@${server.baseURL}`);
      const { store, runId } = await openRun();
      const notes: string[] = [];
      const error = (await runCellsBatch(store, runId, specs, { ...batchOptions, notify: (l) => notes.push(l) }).catch((e: unknown) => e)) as BatchResultsError;
      expect(error).toBeInstanceOf(BatchResultsError);
      expect(error).toBeInstanceOf(EcholensError);
      expect(error.errorKind).toBe('batch_unreadable');
      expect(error.message).toMatch(/unparseable lines after 3 downloads/);
      expect(error.message).toMatch(/4 results were stored, 1 cell\(s\) failed/);
      expect(error.hint).toMatch(/re-run/);
      expect(resultDownloads(server)).toBe(3);
      const cells = (await store.cellsOfRun(runId)).map((c) => c.result);
      expect(cells.filter((c) => c.status === 'done')).toHaveLength(4);
      const bad = cells.filter((c) => c.status === 'failed');
      expect(bad.map((c) => c.errorClass)).toEqual(['batch_unreadable']);
      expect(bad[0]!.key).toBe(target);
      expect((await store.batchJobs().all()).map((j) => j.status)).toEqual(['collected']);
      expect((await store.getRun(runId))!.status).toBe('failed');
      await store.close();
    });

    it('a line torn on one download only is read again and the run completes', async () => {
      let downloads = 0;
      const server = await fake({
        provider,
        mangleResults: (lines) => {
          downloads += 1;
          return downloads === 1 ? lines.map((line, i) => (i === 0 ? line.slice(0, 10) : line)) : lines;
        },
      });
      const { store, runId } = await openRun();
      const summary = await runCellsBatch(store, runId, makeSpecs(4, `${provider}:model-x@${server.baseURL}`), batchOptions);
      expect(summary).toMatchObject({ status: 'done', done: 4, failed: 0 });
      expect(downloads).toBe(2);
      await store.close();
    });

    it('an identical duplicate line is ignored', async () => {
      const server = await fake({ provider, mangleResults: (lines) => [...lines, lines[0]!, lines[1]!] });
      const { store, runId } = await openRun();
      const summary = await runCellsBatch(store, runId, makeSpecs(3, `${provider}:model-x@${server.baseURL}`), batchOptions);
      expect(summary).toMatchObject({ status: 'done', done: 3, failed: 0 });
      expect((await store.batchJobs().all())[0]!.note).toMatch(/2 repeated result lines ignored/);
      await store.close();
    });

    it('a conflicting duplicate (a different answer) fails the cell with the reason and a warning; the last line does not win', async () => {
      let target = '';
      const server = await fake({
        provider,
        mangleResults: (lines) => {
          target = idOf(lines[0]!);
          return [...lines, lines[0]!.replace(/answer to /, 'a different answer to ')];
        },
      });
      const { store, runId } = await openRun();
      const notes: string[] = [];
      const summary = await runCellsBatch(store, runId, makeSpecs(3, `${provider}:model-x@${server.baseURL}`), {
        ...batchOptions,
        notify: (l) => notes.push(l),
      });
      expect(summary).toMatchObject({ done: 2, failed: 1 });
      const cell = (await store.getCell(target))!;
      expect(cell).toMatchObject({ status: 'failed', errorClass: 'batch_conflict', text: null });
      expect(cell.errorMessage).toMatch(/2 different succeeded lines for this cell; none is trusted/);
      expect(notes.some((n) => n.startsWith('warning:') && n.includes('conflicting result lines for 1 cell'))).toBe(true);
      expect((await store.batchJobs().all())[0]!.note).toMatch(/1 cells with conflicting result lines failed/);
      await store.close();
    });

    it('an error line after a success for the same custom_id fails the cell (it is not paid again silently)', async () => {
      let target = '';
      const errorLine = (id: string) =>
        provider === 'openai'
          ? JSON.stringify({
              id: 'batch_req_x',
              custom_id: id,
              response: { status_code: 500, request_id: 'r', body: { error: { message: 'boom', type: 'server_error' } } },
              error: null,
            })
          : JSON.stringify({ custom_id: id, result: { type: 'errored', error: { type: 'error', error: { type: 'api_error', message: 'boom' } } } });
      const server = await fake({
        provider,
        mangleResults: (lines) => {
          target = idOf(lines[0]!);
          return [...lines, errorLine(target)];
        },
      });
      const { store, runId } = await openRun();
      const summary = await runCellsBatch(store, runId, makeSpecs(3, `${provider}:model-x@${server.baseURL}`), batchOptions);
      expect(summary).toMatchObject({ done: 2, failed: 1 });
      const cell = (await store.getCell(target))!;
      expect(cell.errorClass).toBe('batch_conflict');
      expect(cell.errorMessage).toMatch(/lines that disagree \(succeeded, errored\)|lines that disagree \(errored, succeeded\)/);
      await store.close();
    });

    it('a process killed inside the create call: the next start finds the batch by its tag and submits nothing twice', async () => {
      const server = await fake({ provider });
      const specs = makeSpecs(4, `${provider}:model-x@${server.baseURL}`);
      // The state a SIGKILL inside the create call leaves (test/reliability kills a real process):
      // the job recorded `submitting` with no id, and the provider holding the tagged batch.
      const first = await openRun();
      const keys = await first.store.registerCells(first.runId, specs);
      const jobs = first.store.batchJobs();
      const job = (await jobs.get(await jobs.begin(first.runId, provider, specs[0]!.request.model, keys)))!;
      const client = createBatchClient(batchEndpointOf(specs[0]!.request.model, env));
      const lines = await Promise.all(specs.map(async (spec, i) => ({ customId: keys[i]!, body: (await wireRequestOf(spec.request, env)).body })));
      await client.submit(lines, undefined, batchTagOf(job));
      expect(server.batches).toHaveLength(1);
      expect((await jobs.open()).map((j) => [j.status, j.batchId])).toEqual([['submitting', null]]);
      await first.store.close();

      const second = await openRun(first.file);
      const notes: string[] = [];
      const summary = await runCellsBatch(second.store, second.runId, specs, { ...batchOptions, notify: (l) => notes.push(l) });
      expect(summary).toMatchObject({ status: 'done', done: 4, pending: 0 });
      expect(server.batches).toHaveLength(1);
      expect([...server.submissions.values()]).toEqual([1, 1, 1, 1]);
      expect(notes.some((n) => n.includes('killed inside its create call; found its'))).toBe(true);
      if (provider === 'openai')
        expect(server.batches[0]!.metadata).toMatchObject({ echolens_run: 'integrity', echolens_batch_tag: expect.stringMatching(/^echolens-[0-9a-f]{24}$/) });
      await second.store.close();
    });

    it('a create call that loses its connection: the batch it made is found by its tag, one it did not make is created again', async () => {
      const server = await fake({ provider, dropCreates: ['after', 'before'] });
      const { store, runId } = await openRun();
      const notes: string[] = [];
      const first = await runCellsBatch(store, runId, makeSpecs(3, `${provider}:model-x@${server.baseURL}`), { ...batchOptions, notify: (l) => notes.push(l) });
      expect(first).toMatchObject({ status: 'done', done: 3 });
      expect(server.batches).toHaveLength(1); // made once, adopted after the lost answer
      const second = await runCellsBatch(store, runId, makeSpecs(5, `${provider}:model-y@${server.baseURL}`), {
        ...batchOptions,
        notify: (l) => notes.push(l),
      });
      expect(second).toMatchObject({ status: 'done', done: 5 });
      expect(server.batches.map((b) => b.customIds.length)).toEqual([3, 5]); // dropped before it was made, then made once
      expect(notes.filter((n) => n.includes('no batch with its tag exists, trying again'))).toHaveLength(1);
      expect([...server.submissions.values()].every((n) => n === 1)).toBe(true);
      await store.close();
    });

    it('a second Ctrl-C inside a create call: the batch the cut call made is found by its tag and cancelled', async () => {
      const graceful = new AbortController();
      const hard = new AbortController();
      const server = await fake({
        provider,
        holdCreate: async () => {
          graceful.abort();
          hard.abort();
          await new Promise((resolve) => setTimeout(resolve, 20));
        },
      });
      const { store, runId } = await openRun();
      const notes: string[] = [];
      const summary = await runCellsBatch(store, runId, makeSpecs(3, `${provider}:model-x@${server.baseURL}`), {
        ...batchOptions,
        signal: graceful.signal,
        hardSignal: hard.signal,
        notify: (l) => notes.push(l),
      });
      expect(summary.stopReason).toBe('interrupted');
      expect(server.batches.map((b) => b.canceled)).toEqual([true]);
      const jobs = await store.batchJobs().open();
      expect(jobs.map((j) => [j.status, j.batchId])).toEqual([['submitted', server.batches[0]!.id]]);
      expect(notes.some((n) => n.startsWith(`batch: cancelled ${provider} batch ${server.batches[0]!.id}`))).toBe(true);
      await store.close();
    });

    it('a second Ctrl-C cancels the open batches at the provider; the next run collects them', async () => {
      const server = await fake({ provider, pollsUntilDone: 1000 });
      const specs = makeSpecs(3, `${provider}:model-x@${server.baseURL}`);
      const first = await openRun();
      const graceful = new AbortController();
      const hard = new AbortController();
      const notes: string[] = [];
      let polls = 0;
      const summary = await runCellsBatch(first.store, first.runId, specs, {
        ...batchOptions,
        signal: graceful.signal,
        hardSignal: hard.signal,
        notify: (line) => {
          notes.push(line);
          if (line.includes('processing')) polls += 1;
          if (polls === 1 && !hard.signal.aborted) {
            graceful.abort();
            hard.abort();
          }
        },
      });
      expect(summary).toMatchObject({ status: 'interrupted', stopReason: 'interrupted' });
      expect(summary.stopMessage).toMatch(/cancelled at the provider/);
      expect(server.batches.map((b) => b.canceled)).toEqual([true]);
      expect(server.requests.filter((r) => r.method === 'POST' && r.path.endsWith('/cancel'))).toHaveLength(1);
      expect(notes.some((n) => n.startsWith('batch: cancelled'))).toBe(true);
      expect(await first.store.batchJobs().open()).toHaveLength(1);
      await first.store.close();

      const second = await openRun(first.file);
      const after = await runCellsBatch(second.store, second.runId, specs, batchOptions);
      expect(after).toMatchObject({ failed: 3, done: 0 });
      expect(after.results.every((r) => r.errorClass === 'batch_canceled')).toBe(true);
      await second.store.close();
    });
  });
}
