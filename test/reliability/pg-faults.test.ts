// Faults and load on the shared PostgreSQL store: three `echolens worker` processes work
// 10,000 cells against a fake provider with latency (HTTP, 127.0.0.1) while workers are
// SIGKILLed at random moments (a replacement starts each time) and PostgreSQL itself is
// stopped for 10 s mid-run. Every cell must end done (0 lost), and the provider may see a
// cell twice only for calls a killed worker had in flight (0 duplicated beyond those).
import { type ChildProcess, spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';
import { type FakeServer, lastUserText, startFakeOpenAI } from '../../src/models/testing/index.js';
import { PgRunStore } from '../../src/store/postgres/pg-store.js';
import { postgresForTests, startTestCluster, type TestCluster } from '../../src/store/postgres/testing/cluster.js';
import { startLatencyProxy } from '../../src/store/postgres/testing/latency-proxy.js';
import { SEED, seeded } from './size.js';

/** The size, in CI too (about two minutes here); PG_FAULT_CELLS shrinks it for a quick local look. */
const CELLS = Number(process.env.PG_FAULT_CELLS ?? 10_000);
const WORKERS = 3;
const CONCURRENCY = 8;
/** The worker's default write-behind at this concurrency: the concurrency. */
const WRITE_BEHIND = 8;
const KILLS = 3;
const LATENCY_MS = 20;
/** Longer than the outage: a lease must outlive a database restart, or the restart would cause repeats. */
const LEASE_S = 20;
const OUTAGE_MS = 10_000;
/** Cells of the run through the latency proxy (PG_FAULT_CELLS caps it too). */
const PROXY_CELLS = 3_000;

const spawned: ChildProcess[] = [];

function worker(url: string): { child: ChildProcess; exit: Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }> } {
  const child = spawn(
    process.execPath,
    ['--import', 'tsx', 'src/cli/main.ts', 'worker', '--db', url, '--concurrency', String(CONCURRENCY), '--lease', String(LEASE_S), '--idle-exit', '5'],
    { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'pipe'] },
  );
  spawned.push(child);
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  child.stdout?.resume();
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal, stderr })),
  );
  return { child, exit };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const bin = postgresForTests();

describe.skipIf(bin === null)('PostgreSQL store under faults', () => {
  let cluster: TestCluster;
  let server: FakeServer;
  const calls = new Map<string, number>();
  beforeAll(async () => {
    cluster = await startTestCluster(bin!);
    server = await startFakeOpenAI({
      respond: async (request) => {
        const cell = lastUserText(request);
        calls.set(cell, (calls.get(cell) ?? 0) + 1);
        await sleep(LATENCY_MS);
        return { text: `answer to ${cell}`, usage: { inputTokens: 5, outputTokens: 3 } };
      },
    });
  }, 120_000);
  afterAll(async () => {
    // A failed run must not leave workers behind.
    for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.close();
    cluster?.stop();
  });

  // Directly, and through a proxy adding 10 ms each way (a database on another host; fewer cells, the same faults).
  it.each([
    { delayMs: 0, cells: CELLS },
    { delayMs: 10, cells: Math.min(CELLS, PROXY_CELLS) },
  ])(
    `${WORKERS} workers, ${KILLS} SIGKILLs and a ${OUTAGE_MS / 1000} s database outage, +$delayMs ms each way, $cells cells: 0 lost, 0 duplicated beyond calls in flight`,
    async ({ delayMs, cells: CELLS }) => {
      calls.clear();
      const url = cluster.createDatabase(`faults_${delayMs}`);
      const proxy = delayMs > 0 ? await startLatencyProxy(Number(new URL(url).port), delayMs) : null;
      const workerUrl = proxy === null ? url : proxy.via(url);
      const store = await PgRunStore.connect(url);
      const runId = await store.createRun({ experiment: 'reliability', config: {}, seed: SEED, versions: {}, gitCommit: null }, { id: 'faults' });
      const model = `vllm:fake@${server.baseURL}`;
      await store.registerCells(
        runId,
        Array.from({ length: CELLS }, (_, i) => ({
          request: { model, messages: [{ role: 'user' as const, content: `cell ${i}` }], params: {}, sample: 0 },
          labels: { i },
        })),
      );
      await store.close();

      const random = seeded(SEED);
      const started = Date.now();
      const running = Array.from({ length: WORKERS }, () => worker(workerUrl));
      const exits: Array<Promise<{ code: number | null; signal: NodeJS.Signals | null; stderr: string }>> = running.map((w) => w.exit);
      const answered = () => [...calls.values()].length;

      // Kill points spread over the run (by cells answered), the outage in the middle of them.
      const killAt = Array.from({ length: KILLS }, () => Math.floor(CELLS * (0.1 + random() * 0.7))).sort((a, b) => a - b);
      const outageAt = Math.floor(CELLS * 0.45);
      let outageDone = false;
      let kills = 0;
      while (kills < KILLS || !outageDone) {
        await sleep(20);
        if (kills < KILLS && answered() >= killAt[kills]!) {
          const victim = Math.floor(random() * running.length);
          running[victim]!.child.kill('SIGKILL');
          const replacement = worker(workerUrl);
          running[victim] = replacement;
          exits.push(replacement.exit);
          kills += 1;
        }
        if (!outageDone && answered() >= outageAt) {
          cluster.pause();
          await sleep(OUTAGE_MS);
          cluster.resume();
          outageDone = true;
        }
        if (Date.now() - started > 600_000) throw new Error(`stuck: ${answered()} of ${CELLS} cells answered`);
      }
      const progress = setInterval(
        () => console.log(`pg faults: ${answered()} of ${CELLS} cells called after ${Math.round((Date.now() - started) / 1000)} s`),
        30_000,
      );
      const results = await Promise.race([
        Promise.all(exits),
        sleep(300_000).then(() => {
          throw new Error(`workers did not finish: ${answered()} of ${CELLS} cells called`);
        }),
      ]).finally(() => {
        clearInterval(progress);
        void proxy?.close();
      });
      if (!Array.isArray(results)) throw new Error('unreachable');
      const killed = results.filter((r) => r.signal === 'SIGKILL').length;
      expect(killed).toBe(KILLS);
      for (const r of results.filter((r) => r.signal !== 'SIGKILL')) expect(r.code, r.stderr).toBe(0);

      const check = PgRunStore.open(url, { readonly: true });
      const run = await check.requireRun(runId);
      const cells = await check.cellResultsOfRun(runId);
      await check.close();
      expect(run.counts).toMatchObject({ total: CELLS, done: CELLS, pending: 0, failed: 0 });
      expect(cells.every((c) => c.result.status === 'done' && c.result.text === `answer to cell ${c.labels.i}`)).toBe(true);
      const repeats = [...calls.values()].reduce((sum, n) => sum + (n - 1), 0);
      expect(calls.size).toBe(CELLS);
      // A killed worker can have had at most CONCURRENCY calls in flight and WRITE_BEHIND results on their way
      // to the store (write-behind, the concurrency: src/execution/worker.ts); nothing else may repeat a call.
      expect(repeats).toBeLessThanOrEqual(KILLS * (CONCURRENCY + WRITE_BEHIND));
      console.log(
        `pg faults (+${delayMs} ms each way): ${CELLS} cells, ${WORKERS} workers, ${KILLS} SIGKILLs, ${OUTAGE_MS / 1000} s outage: ${cells.length} done, 0 lost, ${repeats} repeated calls (bound ${KILLS * (CONCURRENCY + WRITE_BEHIND)}), ${((Date.now() - started) / 1000).toFixed(1)} s`,
      );
    },
    1_200_000,
  );

  it('during a database outage a second Ctrl-C ends a worker within 2 s', async () => {
    const url = cluster.createDatabase('ctrl_c');
    const store = await PgRunStore.connect(url);
    const runId = await store.createRun({ experiment: 'reliability', config: {}, seed: SEED, versions: {}, gitCommit: null }, { id: 'ctrl-c' });
    await store.registerCells(
      runId,
      Array.from({ length: 200 }, (_, i) => ({
        request: { model: `vllm:fake@${server.baseURL}`, messages: [{ role: 'user' as const, content: `ctrl-c ${i}` }], params: {}, sample: 0 },
        labels: { i },
      })),
    );
    await store.close();
    const w = worker(url);
    // Under way: it has claimed and called.
    while (![...calls.keys()].some((cell) => cell.startsWith('ctrl-c'))) await sleep(20);
    cluster.pause();
    try {
      await sleep(500);
      w.child.kill('SIGINT');
      await sleep(300);
      const sent = Date.now();
      w.child.kill('SIGINT');
      const exited = await Promise.race([w.exit, sleep(5_000).then(() => null)]);
      const tookMs = Date.now() - sent;
      expect(exited, 'the worker did not exit within 5 s of the second Ctrl-C').not.toBeNull();
      expect(tookMs).toBeLessThanOrEqual(2_000);
      console.log(`pg faults: second Ctrl-C during the outage: the worker exited in ${tookMs} ms (code ${exited?.code}, signal ${exited?.signal})`);
    } finally {
      cluster.resume();
    }
  }, 120_000);
});
