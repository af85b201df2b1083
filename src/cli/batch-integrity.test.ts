import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeBatchServer, startFakeBatch } from '../models/testing/index.js';
import { openStore } from '../store/run-store.js';
import { smallPersonaRunArgs } from './testing/persona-args.js';
import { runCliInProcess } from './testing/run-cli.js';

// Issue 29 item 2 at the command line: a results file that stays unreadable ends the run with one
// clear line (no stack trace), and the cells whose lines were readable are in the store.

const dir = mkdtempSync(join(tmpdir(), 'echolens-cli-batch-integrity-'));
const env = { OPENAI_API_KEY: 'sk-cli-integrity-0001' };
let server: FakeBatchServer | undefined;
afterAll(async () => {
  await server?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('persona run --batch with an unreadable results line', { timeout: 120_000 }, () => {
  it('stops with one line naming the batch and the line, keeps the readable answers, and a re-run submits only the failed and unsent cells', async () => {
    let corrupt = true;
    server = await startFakeBatch({
      provider: 'openai',
      mangleResults: (lines) => (corrupt ? lines.map((line, i) => (i === 1 ? `${line.slice(0, 40)}` : line)) : lines),
    });
    const db = join(dir, 'runs.db');
    const args = smallPersonaRunArgs(`openai:gpt-4.1-mini@${server.baseURL}`, db, { batch: true });
    const run = await runCliInProcess(args, env);
    expect(run.code).toBe(1); // a failed call, as a fatal burst online (not 70: no internal error)
    const errorLines = run.stderr.split('\n').filter((line) => line.startsWith('echolens:'));
    expect(errorLines.some((line) => /unparseable lines after 3 downloads \(file file-out-batch_fake_\d+ line 2\)/.test(line))).toBe(true);
    expect(run.stderr).not.toMatch(/\n\s+at /); // no stack trace
    const store = openStore(db, { readonly: true });
    const cells = (await store.cellsOfRun((await store.listRuns())[0]!.id)).filter((cell) => cell.request.model.startsWith('openai:'));
    const failed = cells.filter((cell) => cell.result.status === 'failed');
    expect(failed.map((cell) => cell.result.errorClass)).toEqual(['batch_unreadable']);
    expect(cells.filter((cell) => cell.result.status === 'done').length).toBeGreaterThan(0);
    // The stop came after the leaders' batch: the followers were never submitted.
    const pending = cells.filter((cell) => cell.result.status === 'pending').length;
    await store.close();

    corrupt = false;
    const submittedBefore = server.batches.reduce((sum, batch) => sum + batch.customIds.length, 0);
    const again = await runCliInProcess(args, env);
    expect(again.code, again.stderr).toBe(0);
    const resubmitted = server.batches.reduce((sum, batch) => sum + batch.customIds.length, 0) - submittedBefore;
    expect(resubmitted).toBe(1 + pending);
    expect([...server.submissions.entries()].filter(([, n]) => n > 1).map(([id]) => id)).toEqual(failed.map((cell) => cell.key));
  });
});
