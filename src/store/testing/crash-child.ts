/**
 * A run that the crash-safety test kills with SIGKILL and resumes.
 *   node --import tsx crash-child.ts <store> <runId> <callLog> <cells> [stallAt]
 * Appends the key of every adapter call to <callLog> as the call starts and
 * prints `done <finished>` after each stored cell. With `stallAt`, every call
 * hangs once that many cells of the run are finished, so a kill always lands
 * mid-run with calls in flight. <store> is a SQLite file or a postgresql:// URL; on
 * PostgreSQL leases last 1 s, so the cells a killed run held come back quickly.
 */
import { appendFileSync } from 'node:fs';
import { RunStore } from '../run-store.js';
import { runCells } from '../runner.js';
import { answerFor, FakeModels, fakeResponse, makeSpecs, TEST_MANIFEST, usageFor } from './fakes.js';

const [storePath, runId, callLog, cellsArg, stallArg] = process.argv.slice(2);
if (!storePath || !runId || !callLog || !cellsArg) {
  process.stderr.write('usage: crash-child.ts <store> <runId> <callLog> <cells> [stallAt]\n');
  process.exit(64);
}
const cells = Number(cellsArg);
const stallAt = stallArg === undefined ? Number.POSITIVE_INFINITY : Number(stallArg);

const store = RunStore.open(storePath);
if (!(await store.getRun(runId))) await store.createRun(TEST_MANIFEST, { id: runId });

let finished = 0;
const models = new FakeModels({
  delayMs: () => 2 + Math.floor(Math.random() * 8),
  onCall: (key) => appendFileSync(callLog, `${key}\n`),
  respond: async (request) => {
    if (finished >= stallAt) await new Promise(() => {});
    return fakeResponse(answerFor(request), usageFor(request));
  },
});

const summary = await runCells(store, runId, makeSpecs(cells), {
  adapterFor: models.adapterFor,
  concurrency: 6,
  leaseMs: 1_000,
  onProgress: (snapshot) => {
    finished = snapshot.finished;
    if (snapshot.last) process.stdout.write(`done ${snapshot.finished}\n`);
  },
});
await store.close();
process.stdout.write(`complete ${summary.done} ${summary.cached}\n`);
