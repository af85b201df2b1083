// A secret a model echoes in its answer is scrubbed before it is stored (issue #40): answers of a
// live run, and responses read from an imported archive, keep `<SECRET:kind>` where a key was.
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../src/cli/testing/run-cli.js';
import { writeContextEchoArchive } from '../../src/persona-drift/testing/contextecho-archive.js';
import { SqliteRunStore } from '../../src/store/run-store.js';
import { TEST_MANIFEST } from '../../src/store/testing/fakes.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-answer-secrets-'));
// Shapes of real provider credentials (made up, never valid).
const KEYS = [
  `sk-ant-api03-${'Ab3dE5gH7jK9mN1pQ3sT5vW7yZ9bC1dF3hJ5kL7nP9rS1uV3xY5zA7cE9gI1kM3oQ5sU7wY9aC1eG3iK5mO7qS9uW1yA3cE5gI7kM9oQ1s'}-abcdefAA`,
  'ghp_aB1cD2eF3gH4iJ5kL6mN7oP8qR9sT0uV1wX2y',
  'AKIAIOSFODNN7EXAMPLQ',
  'sk-proj-Zq1Wx2Ec3Rv4Tb5Yn6Um7Ik8Ol9Pa0Sd1Fg2Hj3Kl4Zx5Cv6Bn7Mq8Wr9Et0Yu1Io2Pa3',
  'xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx',
];
const ENV_SECRET = 'my-env-secret-value-0123456789';

/** Every text column of every cell in a store file. */
function storedTexts(file: string): string {
  const db = new Database(file, { readonly: true });
  try {
    return (db.prepare("SELECT coalesce(text, '') || coalesce(reasoning, '') FROM cells").pluck().all() as string[]).join('\n');
  } finally {
    db.close();
  }
}

describe('secrets echoed in answers are not stored', { timeout: 120_000 }, () => {
  it('a recorded answer and its reasoning keep <SECRET:kind> for keys of known shapes and for secret environment values', async () => {
    const file = join(dir, 'live.db');
    const store = SqliteRunStore.open(file, { env: { MY_SERVICE_API_KEY: ENV_SECRET } });
    try {
      const run = await store.createRun(TEST_MANIFEST);
      const specs = KEYS.map((_, i) => ({
        request: { model: 'sim:x', messages: [{ role: 'user' as const, content: `q${i}` }], params: {}, sample: 0 },
        labels: {},
      }));
      const keys = await store.registerCells(run, specs);
      await store.recordResults(
        keys.map((key, i) => ({
          key,
          outcome: {
            status: 'done' as const,
            attempts: 1,
            text: `Here is the key you pasted: ${KEYS[i]} — and the other one, ${ENV_SECRET}.`,
            reasoning: `the user showed ${KEYS[i]}`,
            finishReason: 'stop',
            responseModel: 'sim:x',
            usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
            latencyMs: 1,
            costUsd: 0,
            errorClass: null,
            errorMessage: null,
            startedAt: new Date().toISOString(),
            finishedAt: new Date().toISOString(),
          },
        })),
      );
      const texts = (await store.cellResultsOfRun(run)).map((c) => `${c.result.text}`);
      expect(texts.every((t) => t.startsWith('Here is the key you pasted: <SECRET:'))).toBe(true);
    } finally {
      await store.close();
    }
    const all = storedTexts(file);
    for (const key of [...KEYS, ENV_SECRET]) expect(all).not.toContain(key);
    expect(all).toContain('[redacted]');
  });

  it('persona import stores an archived response that echoes a key with the key scrubbed', async () => {
    const archive = join(dir, 'archive');
    writeContextEchoArchive(archive, (_arm, probe, position) => `answer to ${probe}: use ${KEYS[position % KEYS.length]} for the API`);
    const db = join(dir, 'import.db');
    const r = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', archive, '--db', db]);
    expect(r.code).toBe(0);
    const all = storedTexts(db);
    for (const key of KEYS) expect(all).not.toContain(key);
    expect(all).toMatch(/answer to C01: use <SECRET:[a-z_]+> for the API/u);
    // The archive itself is left as it was.
    expect(readFileSync(join(archive, 'results', 'probes_at_crosscompaction', 'claude-haiku-4-5', 'P1_pre_C1', 'filler', 'C01.json'), 'utf8')).toContain(
      KEYS[0],
    );
  });
});
