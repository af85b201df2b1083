/**
 * A batch run that the kill test stops with SIGKILL while it polls.
 *   node --import tsx batch-crash-child.ts <store> <runId> <model ref> <cells>
 * Submits the cells as one batch, prints `submitted` once the job is recorded,
 * then polls every 60 s (the parent kills it long before the next poll).
 */
import { runCellsBatch } from '../batch-runner.js';
import { RunStore } from '../run-store.js';
import { makeSpecs, TEST_MANIFEST } from './fakes.js';

const [storePath, runId, model, cellsArg] = process.argv.slice(2);
if (!storePath || !runId || !model || !cellsArg) {
  process.stderr.write('usage: batch-crash-child.ts <store> <runId> <model ref> <cells>\n');
  process.exit(64);
}
const store = RunStore.open(storePath);
if (!(await store.getRun(runId))) await store.createRun(TEST_MANIFEST, { id: runId });
await runCellsBatch(store, runId, makeSpecs(Number(cellsArg), model), {
  pollIntervalMs: 60_000,
  costOf: () => 0,
  notify: (line) => {
    if (line.startsWith('batch: submitted')) process.stdout.write('submitted\n');
  },
});
process.stdout.write('finished\n');
