/**
 * The shared PostgreSQL store at network latency: the same grid (a fake model answering in
 * 100 ms, 16 calls in flight per worker) worked by 1 and by 2 worker processes, each
 * connected to PostgreSQL directly and through a TCP proxy that delays every chunk by
 * 1, 10 and 30 ms each way (a database on another host). Prints cells/s and the ratio to
 * the same worker count without the proxy, in one run of this file (issue #38's target:
 * ≥ 0.9 at 10 ms). The timing starts when every worker is connected and the plan is
 * registered (the plan is registered directly, not through the proxy) and ends when no
 * cell is pending. BENCH_REPEATS=n measures every row n times, the rows of one worker count
 * interleaved (direct, +1, +10, +30, direct, …, so a change in the machine's load hits them
 * alike), and prints each row's median and the ratio of medians (the single runs beside it).
 * BENCH_WORKERS=1,2 and BENCH_DELAYS=0,10 pick rows; BENCH_TRACE=1 prints each worker's idle slots.
 * Needs PostgreSQL server binaries (apt-get install postgresql); skips with a message otherwise.
 * BENCH_SMOKE=1: tiny sizes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PgRunStore } from '../src/store/postgres/pg-store.js';
import { findPostgresBin, startTestCluster } from '../src/store/postgres/testing/cluster.js';
import { startLatencyProxy } from '../src/store/postgres/testing/latency-proxy.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const CELLS = smoke ? 64 : Number(process.env.BENCH_CELLS ?? 960);
const LATENCY_MS = smoke ? 20 : 100;
const CONCURRENCY = 16;
const DELAYS = process.env.BENCH_DELAYS ? process.env.BENCH_DELAYS.split(',').map(Number) : smoke ? [0, 10] : [0, 1, 10, 30];
const REPEATS = smoke ? 1 : Math.max(1, Number(process.env.BENCH_REPEATS ?? 1));
const WORKERS = process.env.BENCH_WORKERS ? process.env.BENCH_WORKERS.split(',').map(Number) : [1, 2];
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

async function measure(workers: number, delayMs: number): Promise<number> {
  const url = cluster.createDatabase(`latency_${++database}`);
  await (await PgRunStore.connect(url)).close(); // the schema, before the workers look for work
  const proxy = await startLatencyProxy(Number(new URL(url).port), delayMs);
  const children = Array.from({ length: workers }, () => startWorker(proxy.via(url)));
  await Promise.all(children.map((c) => c.ready));
  const store = PgRunStore.open(url);
  const runId = await store.createRun({ experiment: 'bench', config: {}, seed: 1, versions: {}, gitCommit: null }, { id: 'bench' });
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
  await proxy.close();
  if (done !== CELLS) throw new Error(`only ${done} of ${CELLS} cells done`);
  return CELLS / seconds;
}

try {
  const ideal = (CONCURRENCY * 1000) / LATENCY_MS;
  console.log(`${CELLS} cells, ${LATENCY_MS} ms per call, ${CONCURRENCY} in flight per worker (ideal ${ideal.toFixed(0)} cells/s per worker)`);
  const median = (values: number[]) => {
    const sorted = [...values].sort((a, b) => a - b);
    const middle = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
  };
  for (const workers of WORKERS) {
    const rates = new Map<number, number[]>(DELAYS.map((delay) => [delay, []]));
    for (let round = 0; round < REPEATS; round += 1) {
      for (const delay of DELAYS) rates.get(delay)!.push(await measure(workers, delay));
    }
    const direct = median(rates.get(0) ?? rates.get(DELAYS[0]!)!);
    for (const delay of DELAYS) {
      const rate = median(rates.get(delay)!);
      const label = `${workers} worker${workers > 1 ? 's' : ''}, ${delay === 0 ? 'direct' : `proxy +${delay} ms each way`}`;
      const single = rates.get(delay)!.map((r) => r.toFixed(0));
      const runs = REPEATS > 1 ? `   (runs: ${single.join(', ')})` : '';
      console.log(
        `${label.padEnd(34)} ${rate.toFixed(1).padStart(8)} cells/s   × ${(rate / direct).toFixed(2)} of direct   ${((100 * rate) / (ideal * workers)).toFixed(0).padStart(3)}% of ideal${runs}`,
      );
    }
  }
} finally {
  cluster.stop();
}
