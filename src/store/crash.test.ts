import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { RunStore } from './run-store.js';
import { storeBackends } from './testing/backends.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'testing', 'crash-child.ts');
const CELLS = 200;
/** Kill points: after 10 %, 40 % and 70 % of the cells were reported done. */
const KILL_AT = [20, 80, 140];
/** Backstop: the child stalls a little after the kill point, so the kill always lands mid-run. */
const STALL_MARGIN = 25;

interface ChildEnd {
  code: number | null;
  signal: NodeJS.Signals | null;
  lastDone: number;
  stdout: string;
  stderr: string;
}

/** Runs the child; when `killAt` is given, SIGKILLs it as soon as it reports that many cells done. */
function runChild(store: string, runId: string, log: string, killAt?: number): Promise<ChildEnd> {
  const args = ['--import', 'tsx', CHILD, store, runId, log, String(CELLS)];
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

/**
 * The keys a child logged as it started calls. A SIGKILL can land inside the write of the
 * last line (Linux stops a write to a file at a page edge once a fatal signal is pending),
 * leaving a cut key that names no cell: only whole keys (SHA-256 hex) count.
 */
function readLog(file: string): string[] {
  return existsSync(file)
    ? readFileSync(file, 'utf8')
        .split('\n')
        .filter((line) => /^[0-9a-f]{64}$/.test(line))
    : [];
}

const openForReading = (location: string) => RunStore.open(location, location.startsWith('postgres') ? { readonly: true } : {});

async function doneKeys(file: string, runId: string): Promise<Set<string>> {
  const store = openForReading(file);
  try {
    return new Set((await store.cellsOfRun(runId, { status: 'done' })).map((cell) => cell.key));
  } finally {
    await store.close();
  }
}

async function resultsByKey(file: string, runId: string) {
  const store = openForReading(file);
  try {
    return new Map(
      (await store.cellsOfRun(runId)).map((cell) => [
        cell.key,
        { status: cell.result.status, text: cell.result.text, usage: cell.result.usage, finishReason: cell.result.finishReason, labels: cell.labels },
      ]),
    );
  } finally {
    await store.close();
  }
}

// The same run on both backends: on PostgreSQL the run command claims its cells with
// 1 s leases (the child sets them), so the cells a killed run held come back quickly.
describe.each(storeBackends())('crash safety ($name)', (backend) => {
  beforeAll(() => (backend.available ? backend.setup() : undefined), 120_000);
  afterAll(() => backend.teardown());

  it.skipIf(!backend.available)(
    'a run SIGKILLed at 10 %, 40 % and 70 % resumes to the same results, each cell done exactly once',
    async () => {
      const dir = backend.dir;
      const store = backend.location('killed');
      const runId = 'crash-run';
      const logs: string[] = [];
      const doneAfter: Array<Set<string>> = [];

      for (const [segment, killAt] of KILL_AT.entries()) {
        const log = join(dir, `calls-${segment}.log`);
        logs.push(log);
        const end = await runChild(store, runId, log, killAt);
        expect(end.signal, end.stderr).toBe('SIGKILL');
        const done = await doneKeys(store, runId);
        doneAfter.push(done);
        // Everything reported done before the kill is on disk; the kill landed mid-run.
        expect(done.size).toBeGreaterThanOrEqual(end.lastDone);
        expect(done.size).toBeGreaterThanOrEqual(killAt);
        expect(done.size).toBeLessThan(CELLS);
      }
      const finalLog = join(dir, `calls-${KILL_AT.length}.log`);
      logs.push(finalLog);
      const last = await runChild(store, runId, finalLog);
      expect(last.code, last.stderr).toBe(0);
      expect(last.stdout).toMatch(/complete \d+ \d+/);

      const segments = logs.map(readLog);
      // Within one process no cell is called twice.
      for (const calls of segments) expect(new Set(calls).size).toBe(calls.length);
      // A cell done before a segment started is never called again.
      for (let s = 1; s < segments.length; s += 1) {
        for (const key of segments[s]!) expect(doneAfter[s - 1]!.has(key)).toBe(false);
      }
      // A cell called in a killed segment is called again later iff its result was not stored before the kill.
      for (let s = 0; s < KILL_AT.length; s += 1) {
        const later = new Set(segments.slice(s + 1).flat());
        for (const key of segments[s]!) expect(later.has(key), `segment ${s}, key ${key}`).toBe(!doneAfter[s]!.has(key));
      }
      // Total calls = one per cell + one per call lost in flight at a kill.
      const lostInFlight = KILL_AT.reduce((sum, _k, s) => sum + segments[s]!.filter((key) => !doneAfter[s]!.has(key)).length, 0);
      expect(segments.flat().length).toBe(CELLS + lostInFlight);
      // The kills really cut calls in flight (the case a resume must repeat, and only that).
      expect(lostInFlight).toBeGreaterThan(0);

      const killed = await resultsByKey(store, runId);
      expect(killed.size).toBe(CELLS);
      expect([...killed.values()].every((cell) => cell.status === 'done')).toBe(true);
      const reader = openForReading(store);
      expect((await reader.requireRun(runId)).status).toBe('done');
      await reader.close();

      // The same plan run without interruption gives identical results.
      const clean = backend.location('clean');
      const cleanEnd = await runChild(clean, runId, join(dir, 'clean.log'));
      expect(cleanEnd.code, cleanEnd.stderr).toBe(0);
      expect(killed).toEqual(await resultsByKey(clean, runId));
      expect(readLog(join(dir, 'clean.log'))).toHaveLength(CELLS);
    },
    300_000,
  ); // six child processes start under tsx; slow on a loaded machine, nothing here is timed
});
