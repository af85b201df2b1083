// Kill-and-resume at random moments: a child process runs cells against a slow fake model
// and is SIGKILLed; the store must keep every committed cell, and the resume must call only
// the cells that were not committed (never a committed one again).
import { spawn } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SqliteRunStore } from '../../src/store/run-store.js';
import { SEED, seeded, size } from './size.js';

const root = new URL('../../src/', import.meta.url).pathname;

/** Runs `cells` cells of a deterministic fake model with ~15 ms latency; logs each call. */
const WORKER = `
import { appendFileSync } from 'node:fs';
import { RunStore } from ${JSON.stringify(`${root}store/run-store.ts`)};
import { runCells } from ${JSON.stringify(`${root}store/runner.ts`)};
const [file, log, cells] = [process.argv[2], process.argv[3], Number(process.argv[4])];
const store = RunStore.open(file);
const run = (await store.listRuns())[0]?.id ?? await store.createRun({ experiment: 'reliability', config: {}, seed: 1, versions: {}, gitCommit: null });
const specs = Array.from({ length: cells }, (_, i) => ({ request: { model: 'fake:slow', messages: [{ role: 'user', content: 'cell ' + i }], params: {}, sample: 0 }, labels: { i } }));
const adapter = {
  ref: 'fake:slow', provider: 'fake', modelId: 'slow',
  async generate(request) {
    const text = 'answer to ' + request.messages[0].content;
    appendFileSync(log, request.messages[0].content + '\\n');
    await new Promise((r) => setTimeout(r, 15));
    return { text, finishReason: 'stop', usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 }, latencyMs: 15 };
  },
};
await runCells(store, run, specs, { adapterFor: async () => adapter, concurrency: 4, costOf: () => 0 });
await store.close();
process.stdout.write('finished\\n');
`;

function runWorker(dir: string, file: string, log: string, cells: number, killAfterMs: number | null): Promise<'killed' | 'finished'> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', join(dir, 'worker.mts'), file, log, String(cells)], { stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    let timer: NodeJS.Timeout | undefined;
    if (killAfterMs !== null) {
      // Start the clock once the worker made its first call (tsx start-up varies a lot).
      const poll = setInterval(() => {
        if (existsSync(log)) {
          clearInterval(poll);
          timer = setTimeout(() => child.kill('SIGKILL'), killAfterMs);
        }
      }, 5);
      child.on('exit', () => clearInterval(poll));
    }
    child.on('exit', (code, signal) => {
      if (timer) clearTimeout(timer);
      if (signal === 'SIGKILL') resolve('killed');
      else if (code === 0) resolve('finished');
      else reject(new Error(`worker exited with ${code}: ${stderr}`));
    });
  });
}

describe('kill and resume', () => {
  const rounds = size(1, 10);
  const cells = size(40, 200);
  it(`${rounds} random SIGKILLs over ${cells} cells: no committed cell lost or called again`, async () => {
    const random = seeded(SEED);
    const figures: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const dir = mkdtempSync(join(tmpdir(), 'echolens-kill-'));
      writeFileSync(join(dir, 'worker.mts'), WORKER);
      const file = join(dir, 'runs.db');
      const log = join(dir, 'calls.log');
      const killAfter = Math.floor(random() * 200);
      const outcome = await runWorker(dir, file, log, cells, killAfter);
      const store = SqliteRunStore.open(file, { readonly: true });
      const committed = store.db.prepare("select count(*) as n from cells where status = 'done'").get() as { n: number };
      await store.close();
      const callsBefore = readFileSync(log, 'utf8').trim().split('\n').length;
      appendFileSync(log, '--resume--\n');
      await runWorker(dir, file, log, cells, null);
      const lines = readFileSync(log, 'utf8').trim().split('\n');
      const resumed = lines.slice(lines.indexOf('--resume--') + 1);
      const final = SqliteRunStore.open(file, { readonly: true });
      const done = final.db.prepare("select count(*) as n from cells where status = 'done'").get() as { n: number };
      const wrong = final.db.prepare("select count(*) as n from cells where text not like 'answer to cell %'").get() as { n: number };
      await final.close();
      expect(done.n).toBe(cells);
      expect(wrong.n).toBe(0);
      // The resume calls exactly the cells that were not committed before the kill.
      expect(resumed.length).toBe(cells - committed.n);
      expect(new Set(resumed).size).toBe(resumed.length);
      figures.push(`${outcome} after ${killAfter} ms: ${committed.n}/${cells} committed, ${callsBefore} calls before, ${resumed.length} on resume`);
    }
    console.log(`[reliability kill-resume] ${figures.join('; ')}`);
  }, 120_000);
});
