/**
 * Shared PostgreSQL store: cells/s for 1, 2 and 4 worker processes against a
 * latency-bound fake model (100 ms per call, 8 calls in flight per worker), all in one
 * run of this file so the ratios compare like with like; then 4 workers under a shared
 * rate limit (the run's requests/min, taken from one bucket in the store by every
 * worker), which caps the total whatever the worker count, and under a limit far above
 * the workers' pace (what taking from the shared bucket itself costs).
 * Each worker is its own process (bench/pg-worker-child.ts: the work loop of
 * `echolens worker` with an in-process fake model). Timing starts when every worker is
 * connected and the plan is registered, and ends when no cell is pending.
 * Needs PostgreSQL server binaries (apt-get install postgresql); skips with a message otherwise.
 * BENCH_SMOKE=1: tiny sizes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PgRunStore } from '../src/store/postgres/pg-store.js';
import { findPostgresBin, startTestCluster } from '../src/store/postgres/testing/cluster.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const CELLS = smoke ? 48 : 1_600;
const LATENCY_MS = smoke ? 20 : 100;
const CONCURRENCY = 8;
/** A limit that binds (its 10 s burst is well under the plan), and one far above what 4 workers reach (the bucket's own cost). */
const RATE_PER_MINUTE = smoke ? 600 : 3_000;
const LOOSE_RATE_PER_MINUTE = 600_000;
const here = dirname(fileURLToPath(import.meta.url));

const bin = findPostgresBin();
if (bin === null) {
  console.log('SKIPPED: no PostgreSQL server binaries (apt-get install -y postgresql)');
  process.exit(0);
}
const cluster = await startTestCluster(bin);
let database = 0;

function startWorker(url: string): { child: ChildProcess; ready: Promise<void>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'pg-worker-child.ts'), url, String(CONCURRENCY), String(LATENCY_MS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, ready, exit };
}

async function measure(workers: number, ratePerMinute?: number): Promise<number> {
  const url = cluster.createDatabase(`bench_${++database}`);
  await (await PgRunStore.connect(url)).close(); // the schema, before the workers look for work
  const children = Array.from({ length: workers }, () => startWorker(url));
  await Promise.all(children.map((c) => c.ready));
  const store = PgRunStore.open(url);
  const runId = await store.createRun({ experiment: 'bench', config: {}, seed: 1, versions: {}, gitCommit: null }, { id: 'bench' });
  if (ratePerMinute !== undefined) await store.shared.setSettings(runId, { limits: { fake: { requestsPerMinute: ratePerMinute } } });
  const start = performance.now();
  await store.registerCells(
    runId,
    Array.from({ length: CELLS }, (_, i) => ({
      request: { model: 'fake:m', messages: [{ role: 'user' as const, content: `cell ${i}` }], params: {}, sample: 0 },
      labels: { i },
    })),
  );
  for (;;) {
    if ((await store.shared.openWork(runId)).pending === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const seconds = (performance.now() - start) / 1000;
  const done = (await store.requireRun(runId)).counts.done;
  await store.close();
  for (const c of children) c.child.kill('SIGTERM');
  await Promise.all(children.map((c) => c.exit));
  if (done !== CELLS) throw new Error(`only ${done} of ${CELLS} cells done`);
  return CELLS / seconds;
}

try {
  const ideal = (CONCURRENCY * 1000) / LATENCY_MS;
  console.log(`${CELLS} cells, ${LATENCY_MS} ms per call, ${CONCURRENCY} in flight per worker (ideal ${ideal.toFixed(0)} cells/s per worker)`);
  const one = await measure(1);
  const rows: Array<[string, number]> = [['1 worker', one]];
  for (const n of [2, 4]) rows.push([`${n} workers`, await measure(n)]);
  rows.push([`4 workers, shared limit ${RATE_PER_MINUTE}/min (${(RATE_PER_MINUTE / 60).toFixed(0)}/s)`, await measure(4, RATE_PER_MINUTE)]);
  rows.push([`4 workers, shared limit ${LOOSE_RATE_PER_MINUTE}/min (not binding)`, await measure(4, LOOSE_RATE_PER_MINUTE)]);
  for (const [label, rate] of rows) {
    console.log(`${label.padEnd(44)} ${rate.toFixed(1).padStart(8)} cells/s   × ${(rate / one).toFixed(2)} of 1 worker`);
  }
} finally {
  cluster.stop();
}
