// A fault-storm local server: most answers are resets, 5xx, truncations or empty outputs.
// Every cell must end recorded (done, empty or failed), no cell may be called more often
// than the retry policy allows, a dropout must come from empty answers only, and a resume
// must retry exactly the failed cells.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../../src/models/testing/fake-openai.js';
import type { FakeOutcome } from '../../src/models/testing/fake-server.js';
import { SqliteRunStore } from '../../src/store/run-store.js';
import { runCells } from '../../src/store/runner.js';
import { SEED, seeded, size } from './size.js';

describe('fault storm', () => {
  const cells = size(24, 300);
  it(`${cells} cells against a server that fails 75% of calls`, async () => {
    const random = seeded(SEED + 1);
    const byCell = new Map<string, FakeOutcome[]>();
    const server = await startFakeOpenAI({
      respond: (request) => {
        const body = request.body as { messages?: Array<{ content?: unknown }> };
        const cell = String(body.messages?.at(-1)?.content ?? '');
        const roll = random();
        const outcome: FakeOutcome =
          roll < 0.25
            ? { fault: 'reset' }
            : roll < 0.45
              ? { fault: 'status', status: 503 }
              : roll < 0.6
                ? { fault: 'truncate' }
                : roll < 0.75
                  ? { fault: 'empty' }
                  : { text: `answer to ${cell}` };
        byCell.set(cell, [...(byCell.get(cell) ?? []), outcome]);
        return outcome;
      },
    });
    try {
      const store = SqliteRunStore.open(join(mkdtempSync(join(tmpdir(), 'echolens-storm-')), 'runs.db'));
      const runId = await store.createRun({ experiment: 'reliability', config: {}, seed: 1, versions: {}, gitCommit: null });
      const specs = Array.from({ length: cells }, (_, i) => ({
        request: { model: `openai:m@${server.baseURL}`, messages: [{ role: 'user' as const, content: `cell ${i}` }], params: {}, sample: 0 },
        labels: { i },
      }));
      const policy = { maxAttempts: 4, emptyRetries: 2, baseDelayMs: 1, maxDelayMs: 2 };
      const options = { retry: policy, concurrency: 4, fatalBurst: 1_000_000, sleep: async () => undefined, costOf: () => 0 };
      process.env.OPENAI_API_KEY ??= 'sk-test-not-a-real-key-000000000000';
      const first = await runCells(store, runId, specs, options);
      const statuses = store.db.prepare('select status, count(*) as n from cells group by status').all() as Array<{ status: string; n: number }>;
      const counts = Object.fromEntries(statuses.map((s) => [s.status, s.n]));
      expect((counts.done ?? 0) + (counts.empty ?? 0) + (counts.failed ?? 0)).toBe(cells);
      for (const outcomes of byCell.values()) expect(outcomes.length).toBeLessThanOrEqual(policy.maxAttempts);
      // A dropout only when the model answered (empty) the required number of times.
      const empties = store.db.prepare("select request from cells where status = 'empty'").all() as Array<{ request: string }>;
      for (const row of empties) {
        const cell = (JSON.parse(row.request) as { messages: Array<{ content: string }> }).messages[0]!.content;
        const emptyAnswers = (byCell.get(cell) ?? []).filter((o) => 'fault' in o && o.fault === 'empty').length;
        expect(emptyAnswers).toBeGreaterThanOrEqual(policy.emptyRetries + 1);
      }
      const calls = [...byCell.values()].reduce((n, o) => n + o.length, 0);
      const failedBefore = counts.failed ?? 0;
      const callsBefore = server.requests.length;
      const second = await runCells(store, runId, specs, options);
      const retried = new Set(
        server.requests.slice(callsBefore).map((r) => String((r.body as { messages: Array<{ content: string }> }).messages.at(-1)?.content)),
      );
      expect(retried.size).toBe(failedBefore);
      await store.close();
      console.log(
        `[reliability storm] ${cells} cells, ${calls} calls: ${JSON.stringify(counts)} after the first pass (${first.calls} calls, stop: ${first.stopReason ?? 'none'}); resume retried ${retried.size} failed cells → ${second.done} done, ${second.failed} failed again`,
      );
    } finally {
      await server.close();
    }
  }, 60_000);
});
