import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { type FakeBatchServer, lastUserText, startFakeBatch } from '../models/testing/index.js';
import { openStore } from '../store/run-store.js';
import { DEMO_SESSION } from '../persona-drift/testing/small-config.js';
import { smallPersonaRunArgs } from './testing/persona-args.js';
import { runCliInProcess } from './testing/run-cli.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-cli-batch-'));
const env = { OPENAI_API_KEY: 'sk-cli-batch-test-0001', ANTHROPIC_API_KEY: 'ak-cli-batch-test-0002' };
const servers: FakeBatchServer[] = [];
afterAll(async () => {
  for (const server of servers) await server.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Target cells of a persona run: text, usage and cost per key. */
async function targetCells(db: string, provider: string) {
  const store = openStore(db, { readonly: true });
  try {
    const run = (await store.listRuns())[0]!;
    return (await store.cellsOfRun(run.id))
      .filter((cell) => cell.request.model.startsWith(`${provider}:`))
      .map((cell) => ({
        key: cell.key,
        status: cell.result.status,
        text: cell.result.text,
        usage: cell.result.usage,
        cost: cell.result.costUsd ?? Number.NaN,
      }));
  } finally {
    await store.close();
  }
}

describe('persona run --batch', { timeout: 120_000 }, () => {
  const cases = [
    { provider: 'openai', model: 'gpt-4.1-mini', batchId: 'batch_fake_0', usage: undefined },
    // Anthropic with prompt-cache reads and writes in the usage: the discount applies to every token class.
    {
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      batchId: 'msgbatch_fake_0',
      usage: { inputTokens: 4000, cachedInputTokens: 3000, cacheWriteTokens: 500, outputTokens: 60 },
    },
  ] as const;
  for (const c of cases) {
    it(`${c.provider}: runs the target cells as batches (leaders, then followers), the sim judge online, and records them as an online run would at half the cost`, async () => {
      const server = await startFakeBatch({
        provider: c.provider,
        respond: (request) => ({ text: `I am a coding assistant. (${lastUserText(request).length})`, ...(c.usage ? { usage: c.usage } : {}) }),
      });
      servers.push(server);
      const target = `${c.provider}:${c.model}@${server.baseURL}`;
      const args = (db: string, batch = false) => smallPersonaRunArgs(target, db, { batch });

      const onlineDb = join(dir, `${c.provider}-online.db`);
      const online = await runCliInProcess(args(onlineDb), env);
      expect(online.code, online.stderr).toBe(0);

      const batchDb = join(dir, `${c.provider}-batch.db`);
      const batched = await runCliInProcess(args(batchDb, true), env);
      expect(batched.code, batched.stderr).toBe(0);
      // Two waves: the leader of each prefix group (and cells in no group) first, the followers once those ended.
      expect(batched.stderr).toMatch(
        new RegExp(`batch: submitted ${c.provider} batch ${c.batchId} \\(${c.provider}:${c.model.replace(/\./g, '\\.')}@.*, \\d+ cells\\)`),
      );
      expect(batched.stderr).toMatch(/batch: leaders answered; submitting \d+ cells that read their prompt cache/);
      expect(batched.stderr).toMatch(/--batch: sim:judge has no batch API; running \d+ cells online/);
      expect(batched.stderr).not.toContain(env.OPENAI_API_KEY);
      expect(batched.stderr).not.toContain(env.ANTHROPIC_API_KEY);

      expect(server.batches).toHaveLength(2);
      expect(server.batches.reduce((sum, batch) => sum + batch.customIds.length, 0)).toBe(20);
      expect(server.batches[1]!.customIds.length).toBeGreaterThan(0);
      expect([...server.submissions.values()].every((n) => n === 1)).toBe(true);
      const a = await targetCells(onlineDb, c.provider);
      const b = await targetCells(batchDb, c.provider);
      expect(a).toHaveLength(20);
      expect(b.map(({ key, status, text, usage }) => ({ key, status, text, usage }))).toEqual(
        a.map(({ key, status, text, usage }) => ({ key, status, text, usage })),
      );
      const onlineCost = a.reduce((sum, cell) => sum + cell.cost, 0);
      const batchCost = b.reduce((sum, cell) => sum + cell.cost, 0);
      expect(onlineCost).toBeGreaterThan(0);
      // Half price; Anthropic's cache writes in a batch use the 1-hour lifetime, billed 2× input instead of 1.25×.
      const ratio = c.usage === undefined ? 0.5 : (500 * 3 + 3000 * 0.3 + 500 * 6 + 60 * 15) / (2 * (500 * 3 + 3000 * 0.3 + 500 * 3.75 + 60 * 15));
      expect(batchCost / onlineCost).toBeCloseTo(ratio, 12);
      process.stderr.write(
        `persona grid, ${c.provider}:${c.model} (20 target cells): online $${onlineCost.toFixed(6)}, batch $${batchCost.toFixed(6)}, ratio ${(batchCost / onlineCost).toFixed(4)}\n`,
      );

      // The same command again: everything is cached; nothing is submitted.
      const again = await runCliInProcess(args(batchDb, true), env);
      expect(again.code, again.stderr).toBe(0);
      expect(server.batches).toHaveLength(2);
      const store = openStore(batchDb, { readonly: true });
      expect((await store.batchJobs().all()).map((job) => job.status)).toEqual(['collected', 'collected']);
      await store.close();
    });
  }

  it('a dry run with --batch says what the batch price changes', async () => {
    const dry = await runCliInProcess(['persona', 'run', '--session', DEMO_SESSION, '--target', 'sim:persona', '--judge', 'sim:judge', '--dry-run', '--batch']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/--batch: the "with --batch" figure above is the one that applies/);
    expect(dry.stdout).toMatch(/with --batch \(batch × cache\) \$\d+\.\d\d/);
    // The rule for followers whose batch may outlive the cache, in words.
    expect(dry.stdout).toMatch(
      /--batch and the prompt cache: followers go in a second batch .* re-warming each prefix group .* or running the followers online/,
    );
  });

  it('a dry run states the OpenAI prompt-cache retention and the followers’ lifetimes it gives, and refuses an unknown retention', async () => {
    const config = (retention: string) => {
      const file = join(dir, `retention-${retention || 'unset'}.yaml`);
      writeFileSync(
        file,
        [
          `sessions: [${JSON.stringify(DEMO_SESSION)}]`,
          'positions: [{ steps: [40] }]',
          'targets: ["openai:gpt-4.1"]',
          'judges: ["sim:judge"]',
          retention === '' ? '' : `limits: { openaiCacheRetention: ${retention} }`,
          '',
        ].join('\n'),
      );
      return file;
    };
    const extended = await runCliInProcess(['persona', 'run', config('24h'), '--dry-run', '--batch'], env);
    expect(extended.code, extended.stderr).toBe(0);
    expect(extended.stdout).toMatch(
      /OpenAI prompt-cache retention: 24h \(limits\.openaiCacheRetention\) on every openai: call, billed at the same price as in-memory caching/,
    );
    expect(extended.stdout).toMatch(/80% of the cache lifetime \(Anthropic 1 h, OpenAI 24 h \(prompt_cache_retention "24h"\)\)/);
    expect(extended.stdout).toMatch(/OpenAI prompt_cache_retention by model: openai:gpt-4\.1 24h\n/);
    const inMemory = await runCliInProcess(['persona', 'run', config('in_memory'), '--dry-run', '--batch'], env);
    expect(inMemory.code, inMemory.stderr).toBe(0);
    expect(inMemory.stdout).toMatch(/\(Anthropic 1 h, OpenAI 5 min \(prompt_cache_retention "in_memory"\)\)/);
    // Without a retention in the config, --batch asks 24h for a model that takes it.
    const unset = await runCliInProcess(['persona', 'run', config(''), '--dry-run', '--batch'], env);
    expect(unset.code, unset.stderr).toBe(0);
    expect(unset.stdout).toMatch(/OpenAI prompt_cache_retention by model: openai:gpt-4\.1 24h on its prefix groups\n/);
    const online = await runCliInProcess(['persona', 'run', config('24h'), '--dry-run'], env);
    expect(online.stdout).toMatch(/OpenAI prompt-cache retention: 24h/);
    expect(online.stdout).not.toMatch(/--batch and the prompt cache/);
    const bad = await runCliInProcess(['persona', 'run', config('1h'), '--dry-run'], env);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/openaiCacheRetention/);
    expect(bad.stderr).not.toMatch(/\n\s+at /);
  });

  it('--poll-interval must be positive and --batch is in every run command’s help', async () => {
    const bad = await runCliInProcess(['persona', 'run', '--session', DEMO_SESSION, '--target', 'sim:persona', '--batch', '--poll-interval', '0']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--poll-interval/);
    for (const group of ['persona', 'memory', 'continuation']) {
      const help = await runCliInProcess([group, 'run', '--help']);
      expect(help.stdout).toMatch(/--batch/);
      expect(help.stdout).toMatch(/--poll-interval <s>/);
    }
  });
});
