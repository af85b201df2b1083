// The done-when test of the shared PostgreSQL store: a continuation run plus two workers on a
// local PostgreSQL work one grid against a fake provider with latency while one worker is
// SIGKILLed. Every cell ends done, the provider saw at most cells + the calls the killed
// worker had in flight, and the report equals the report of the same grid run on SQLite.
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../src/core/version.js';
import { startFakeOpenAI } from '../../src/models/testing/index.js';
import type { FakeServer } from '../../src/models/testing/index.js';
import { PgRunStore } from '../../src/store/postgres/pg-store.js';
import { postgresForTests, startTestCluster, type TestCluster } from '../../src/store/postgres/testing/cluster.js';

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CONCURRENCY = 4;
/** Slow enough that the run, working alone at concurrency 1, is still busy when the workers have started. */
const LATENCY_MS = 300;

const spawned: ChildProcess[] = [];

function cli(args: string[], env: NodeJS.ProcessEnv = {}): ChildProcess {
  const child = spawn(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', ...args], {
    cwd: packageRoot(),
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  spawned.push(child);
  return child;
}

function finished(child: ChildProcess): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  return new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

/** The report as JSON (it names no store, and its one time, the measurement's, is blanked), so two backends can be compared whole. */
function report(db: string): Record<string, unknown> {
  const result = spawnSync(process.execPath, ['--import', 'tsx', 'src/cli/main.ts', 'continuation', 'report', db, '--format', 'json'], {
    cwd: packageRoot(),
    encoding: 'utf8',
  });
  if (result.status !== 0) throw new Error(`report failed: ${result.stderr}`);
  return JSON.parse(result.stdout, (key, value) => (key === 'measuredAt' ? '(measured at)' : value)) as Record<string, unknown>;
}

async function until(condition: () => boolean | Promise<boolean>, timeoutMs: number, message: string): Promise<void> {
  const start = Date.now();
  while (!(await condition())) {
    if (Date.now() - start > timeoutMs) throw new Error(message);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const bin = postgresForTests();

describe.skipIf(bin === null)('PostgreSQL store: run + two workers, one SIGKILLed', () => {
  let cluster: TestCluster;
  let server: FakeServer;
  let dir: string;
  beforeAll(async () => {
    cluster = await startTestCluster(bin!);
    dir = mkdtempSync(join(tmpdir(), 'echolens-pgworkers-'));
    // Deterministic answers (a function of the messages) after a fixed latency: the same grid gets
    // the same answers from any process, so the two backends' reports can be compared.
    server = await startFakeOpenAI({
      respond: async (request) => {
        await new Promise((resolve) => setTimeout(resolve, LATENCY_MS));
        const digest = createHash('sha256')
          .update(JSON.stringify(request.body?.messages ?? []))
          .digest('hex');
        return { text: `Read(file_path="src/${digest.slice(0, 6)}.ts")`, usage: { inputTokens: 100, outputTokens: 10 } };
      },
    });
  }, 120_000);
  afterAll(async () => {
    // A failed run must not leave processes behind.
    for (const child of spawned) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await server?.close();
    cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('every cell ends done, calls ≤ cells + in flight, and the report equals the SQLite run', async () => {
    const url = cluster.createDatabase('grid');
    const target = `vllm:fake@${server.baseURL}`;
    const grid = ['continuation', 'run', '--session', DEMO, '--target', target, '--cutpoints', '20', '--concurrency', '1'];

    // The run registers the plan and starts working; two workers join once it is under way.
    const run = cli([...grid, '--db', url]);
    const runDone = finished(run);
    await until(() => server.requests.length > 0, 120_000, 'the run made no call');
    const workerArgs = ['worker', '--db', url, '--concurrency', String(CONCURRENCY), '--idle-exit', '4', '--lease', '2'];
    const workers = [cli(workerArgs), cli(workerArgs)];
    const workerDone = workers.map(finished);

    // SIGKILL the first worker while it holds leases (it is mid-work), after a random extra moment.
    const watcher = PgRunStore.open(url, { readonly: true });
    const owner = `%:${workers[0]!.pid}:%`;
    await until(
      async () => Number((await watcher.client.query('SELECT count(*)::int AS n FROM cells WHERE lease_owner LIKE $1', [owner])).rows[0]!.n) > 0,
      120_000,
      'the worker never claimed',
    );
    await watcher.close();
    await new Promise((resolve) => setTimeout(resolve, Math.floor(Math.random() * 300)));
    workers[0]!.kill('SIGKILL');
    const killAt = server.requests.length;
    const runResult = await runDone;
    expect(runResult.code, runResult.stderr).toBe(0);
    const [killed, survivor] = await Promise.all(workerDone);
    expect(killed!.signal).toBe('SIGKILL');
    expect(survivor!.code, survivor!.stderr).toBe(0);

    const store = PgRunStore.open(url, { readonly: true });
    const [info] = await store.listRuns();
    const cells = await store.cellResultsOfRun(info!.id);
    await store.close();
    const distinct = new Set(cells.map((c) => c.key)).size;
    expect(info!.status).toBe('done');
    expect(cells.every((c) => c.result.status === 'done')).toBe(true);
    const calls = server.requests.length;
    expect(calls).toBeGreaterThanOrEqual(distinct);
    expect(calls).toBeLessThanOrEqual(distinct + CONCURRENCY);
    const survivorWrote = JSON.parse(survivor!.stdout.trim().split('\n').pop()!) as { written: number };
    console.log(`pg workers: ${distinct} cells, ${calls} calls (killed after ${killAt}), survivor wrote ${survivorWrote.written}`);

    // The same grid on SQLite (one process), then the two reports.
    const file = join(dir, 'grid.db');
    const sqliteRun = await finished(cli([...grid, '--db', file]));
    expect(sqliteRun.code, sqliteRun.stderr).toBe(0);
    const fromPg = report(url);
    expect(fromPg.runId).toBe(info!.id);
    expect(fromPg).toEqual(report(file));

    // runs export moves the run to a SQLite file that reports the same; runs import brings it back.
    const exported = join(dir, 'exported.db');
    const exportRun = await finished(cli(['runs', 'export', url, exported]));
    expect(exportRun.code, exportRun.stderr).toBe(0);
    expect(report(exported)).toEqual(fromPg);
    const again = cluster.createDatabase('reimported');
    const importRun = await finished(cli(['runs', 'import', exported, again]));
    expect(importRun.code, importRun.stderr).toBe(0);
    expect(report(again)).toEqual(fromPg);
  }, 300_000);
});
