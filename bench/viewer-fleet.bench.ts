/**
 * The viewer while a fleet works: `echolens view` on a PostgreSQL store answers its pages while
 * two worker processes (bench/pg-worker-child.ts: the engine of `echolens worker`, fake model at
 * 100 ms, 8 calls in flight each) work a 1,600-cell run in the same store. Prints the latency of
 * the run list (`/`), `/api/runs` and the run's page (`/run`) during the fleet and, for the same
 * pages, once the fleet has finished (the same store, idle), with the ratio of their medians and
 * 95th percentiles. The viewer runs in this process, as `echolens view` would.
 * Needs PostgreSQL server binaries (apt-get install postgresql); skips with a message otherwise.
 * BENCH_SMOKE=1: tiny sizes.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerBuiltinSimProfiles } from '../src/builtin-sims.js';
import { createAdapter } from '../src/models/create-adapter.js';
import { startViewer } from '../src/report/viewer/server.js';
import { openStore } from '../src/store/run-store.js';
import { PgRunStore } from '../src/store/postgres/pg-store.js';
import { findPostgresBin, startTestCluster } from '../src/store/postgres/testing/cluster.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const CELLS = smoke ? 64 : 1_600;
const LATENCY_MS = smoke ? 20 : 100;
const CONCURRENCY = 8;
const WORKERS = 2;
const here = dirname(fileURLToPath(import.meta.url));

const bin = findPostgresBin();
if (bin === null) {
  console.log('SKIPPED: no PostgreSQL server binaries (apt-get install -y postgresql)');
  process.exit(0);
}
registerBuiltinSimProfiles();
const cluster = await startTestCluster(bin);

function startWorker(url: string): { child: ChildProcess; ready: Promise<void>; exit: Promise<number | null> } {
  const child = spawn(process.execPath, ['--import', 'tsx', join(here, 'pg-worker-child.ts'), url, String(CONCURRENCY), String(LATENCY_MS)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const ready = new Promise<void>((resolve) => child.stdout!.once('data', () => resolve()));
  const exit = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, ready, exit };
}

const quantile = (values: readonly number[], q: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
};

async function timedGet(url: string): Promise<number> {
  const start = performance.now();
  const response = await fetch(url);
  await response.arrayBuffer();
  if (!response.ok) throw new Error(`${url}: HTTP ${response.status}`);
  return performance.now() - start;
}

/** Requests each page in turn until `until` resolves (at least `minRounds` rounds). */
async function sample(pages: Record<string, string>, until: Promise<unknown>, minRounds: number): Promise<Record<string, number[]>> {
  let finished = false;
  void until.then(() => {
    finished = true;
  });
  const times: Record<string, number[]> = Object.fromEntries(Object.keys(pages).map((name) => [name, []]));
  for (let round = 0; !finished || round < minRounds; round += 1) {
    for (const [name, url] of Object.entries(pages)) times[name]!.push(await timedGet(url));
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return times;
}

try {
  const url = cluster.createDatabase('viewer_fleet');
  await (await PgRunStore.connect(url)).close();
  const writer = PgRunStore.open(url);
  const runId = await writer.createRun({ experiment: 'bench', config: {}, seed: 1, versions: {}, gitCommit: null }, { id: 'fleet' });
  const children = Array.from({ length: WORKERS }, () => startWorker(url));
  await Promise.all(children.map((c) => c.ready));
  const viewer = await startViewer({
    stores: [{ file: url, store: openStore(url, { readonly: true }) }],
    sessions: [],
    target: createAdapter('sim:persona'),
    judge: createAdapter('sim:judge'),
    port: 0,
  });
  const pages = { 'run list (/)': viewer.url, '/api/runs': `${viewer.url}api/runs`, 'run page (/run)': `${viewer.url}run?s=0&r=${runId}` };
  await writer.registerCells(
    runId,
    Array.from({ length: CELLS }, (_, i) => ({
      request: { model: 'fake:m', messages: [{ role: 'user' as const, content: `cell ${i}` }], params: {}, sample: 0 },
      labels: { i },
    })),
  );
  const start = performance.now();
  const drained = (async () => {
    while ((await writer.shared.openWork(runId)).pending > 0) await new Promise((resolve) => setTimeout(resolve, 50));
  })();
  const busy = await sample(pages, drained, 3);
  const seconds = (performance.now() - start) / 1000;
  for (const c of children) c.child.kill('SIGTERM');
  await Promise.all(children.map((c) => c.exit));
  const idle = await sample(pages, Promise.resolve(), busy['/api/runs']!.length);
  await viewer.close();
  await writer.close();
  console.log(`${CELLS} cells worked by ${WORKERS} workers in ${seconds.toFixed(1)} s; load ${(await import('node:os')).loadavg()[0]!.toFixed(1)}`);
  console.log('page                 requests   during fleet p50 / p95 / max (ms)   idle p50 / p95 / max (ms)   ratio p50  p95');
  for (const name of Object.keys(pages)) {
    const b = busy[name]!;
    const i = idle[name]!;
    const row = (v: number[]) => `${quantile(v, 0.5).toFixed(1)} / ${quantile(v, 0.95).toFixed(1)} / ${Math.max(...v).toFixed(1)}`;
    console.log(
      `${name.padEnd(20)} ${String(b.length).padStart(8)}   ${row(b).padEnd(34)}  ${row(i).padEnd(26)}  ×${(quantile(b, 0.5) / quantile(i, 0.5)).toFixed(2)}  ×${(quantile(b, 0.95) / quantile(i, 0.95)).toFixed(2)}`,
    );
  }
} finally {
  cluster.stop();
}
