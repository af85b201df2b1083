import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/version.js';
import { RunStore } from '../run-store.js';
import { answerFor, makeSpecs } from '../testing/fakes.js';
import { postgresForTests, startTestCluster, type TestCluster } from './testing/cluster.js';

// The SQLite crash test (src/store/crash.test.ts) on PostgreSQL: a run command SIGKILLed at
// 10 %, 40 % and 70 % resumes to every cell done; a cell is called again only when a kill cut
// its call before its result was stored.

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'testing', 'pg-crash-child.ts');
const CELLS = 200;
const KILL_AT = [20, 80, 140];
const STALL_MARGIN = 25;

interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  lastDone: number;
  stdout: string;
  stderr: string;
}

function runChild(url: string, runId: string, log: string, killAt?: number): Promise<ChildEnd> {
  const args = ['--import', 'tsx', CHILD, url, runId, log, String(CELLS)];
  if (killAt !== undefined) args.push(String(killAt + STALL_MARGIN));
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, args, { cwd: packageRoot(), stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    let lastDone = 0;
    let killed = false;
    child.stdout.setEncoding('utf8');
    child.stderr.setEncoding('utf8');
    child.stdout.on('data', (chunk: string) => {
      stdout += chunk;
      for (const match of chunk.matchAll(/done (\d+)/g)) lastDone = Math.max(lastDone, Number(match[1]));
      if (killAt !== undefined && !killed && lastDone >= killAt) {
        killed = true;
        child.kill('SIGKILL');
      }
    });
    child.stderr.on('data', (chunk: string) => {
      stderr += chunk;
    });
    child.on('error', reject);
    child.on('close', (code, signal) => resolve({ code, signal, lastDone, stdout, stderr }));
  });
}

/** Whole keys only: a SIGKILL can cut the last line of a log. */
function readLog(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /^[0-9a-f]{64}$/.test(line))
    : [];
}

async function doneKeys(url: string, runId: string): Promise<Set<string>> {
  const store = RunStore.open(url, { readonly: true });
  try {
    return new Set((await store.cellsOfRun(runId, { status: 'done' })).map((cell) => cell.key));
  } finally {
    await store.close();
  }
}

const bin = postgresForTests();

describe.skipIf(bin === null)('crash safety on PostgreSQL', () => {
  let cluster: TestCluster;
  let dir: string;
  beforeAll(async () => {
    cluster = await startTestCluster(bin!);
    dir = mkdtempSync(join(tmpdir(), 'echolens-pgcrash-'));
  }, 120_000);
  afterAll(() => {
    cluster?.stop();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('a run SIGKILLed at 10 %, 40 % and 70 % resumes to every cell done; only calls cut by a kill repeat', async () => {
    const url = cluster.createDatabase('crash');
    const runId = 'crash-run';
    const logs: string[] = [];
    const doneAfter: Array<Set<string>> = [];
    for (const [segment, killAt] of KILL_AT.entries()) {
      const log = join(dir, `calls-${segment}.log`);
      logs.push(log);
      const end = await runChild(url, runId, log, killAt);
      expect(end.signal, end.stderr).toBe('SIGKILL');
      const done = await doneKeys(url, runId);
      doneAfter.push(done);
      expect(done.size).toBeGreaterThanOrEqual(end.lastDone);
      expect(done.size).toBeGreaterThanOrEqual(killAt);
      expect(done.size).toBeLessThan(CELLS);
    }
    const finalLog = join(dir, `calls-${KILL_AT.length}.log`);
    logs.push(finalLog);
    const last = await runChild(url, runId, finalLog);
    expect(last.code, last.stderr).toBe(0);
    expect(last.stdout).toMatch(/complete \d+ \d+/);

    const segments = logs.map(readLog);
    for (const calls of segments) expect(new Set(calls).size).toBe(calls.length);
    for (let s = 1; s < segments.length; s += 1) {
      for (const key of segments[s]!) expect(doneAfter[s - 1]!.has(key)).toBe(false);
    }
    for (let s = 0; s < KILL_AT.length; s += 1) {
      const later = new Set(segments.slice(s + 1).flat());
      for (const key of segments[s]!) expect(later.has(key), `segment ${s}, key ${key}`).toBe(!doneAfter[s]!.has(key));
    }
    const lostInFlight = KILL_AT.reduce((sum, _k, s) => sum + segments[s]!.filter((key) => !doneAfter[s]!.has(key)).length, 0);
    expect(segments.flat().length).toBe(CELLS + lostInFlight);
    expect(lostInFlight).toBeGreaterThan(0);

    const store = RunStore.open(url, { readonly: true });
    const cells = await store.cellsOfRun(runId);
    await store.close();
    const expected = new Map(makeSpecs(CELLS).map((spec) => [answerFor(spec.request), true]));
    expect(cells.length).toBe(CELLS);
    expect(cells.every((cell) => cell.result.status === 'done' && expected.has(cell.result.text!))).toBe(true);
  }, 240_000);
});
