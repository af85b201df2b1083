/**
 * A batch that outlives the prompt cache (issue 44). The persona grid of bench/batch-cache.bench.ts
 * (12 positions × 25 probes × 2 arms, ~20,000 words of context a cell) through `runCellsBatch`
 * against fake batch servers that bill by the providers' published caching rules
 * (bench/cache-sim.ts), on a virtual clock shared by the runner (its `now` and `sleep`) and the
 * simulated providers: every batch is processed QUEUE minutes after it is submitted (its lines
 * over the last 90 s before it is seen ended), polled each virtual minute.
 *
 * Three runs per provider: no gap (a 2-minute queue), a 65-minute queue with the followers always
 * in a batch (`followerRoute: 'batch'`, the earlier behaviour: the followers are processed after
 * the cache the leaders wrote has expired), and a 65-minute queue with the cache watch
 * (`followerRoute: 'auto'`: re-warm or online, by the rule the dry run states). Online calls (the
 * re-warm calls, followers sent online) are billed at the virtual instant they are made; the
 * OpenAI per-route overflow is not applied (as in batch-cache.bench.ts). Printed: each bill, its
 * ratio to the no-gap bill (target for the watched run: ≤ 1.1, or the run warned and re-warmed),
 * the route and the warnings the run printed. BENCH_SMOKE=1: 2 positions × 4 probes, 2,000 words.
 *
 * OpenAI runs twice over: with `limits.openaiCacheRetention: in_memory` (a prefix lives 5 minutes
 * in the simulator) and with the retention `--batch` picks for GPT-4.1 when the config sets none
 * (`24h`, sent as `prompt_cache_retention`; the simulator keeps such a prefix 24 hours). Each
 * setting's 65-minute rows are divided by its own no-gap bill.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { builtInPriceTable, costOf, findPrice } from '../src/models/prices.js';
import { type FakeBatchServer, type FakeRequest, startFakeBatch } from '../src/models/testing/index.js';
import { countTokens } from '../src/models/token-count.js';
import { runCellsBatch } from '../src/store/batch-runner.js';
import { RunStore } from '../src/store/run-store.js';
import { TEST_MANIFEST } from '../src/store/testing/fakes.js';
import { AnthropicCache, billedInput, blocksOf, type CacheUsage, OpenAICache, tokenCounter } from './cache-sim.js';
import { personaGrid, withModel } from './persona-grid.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const POSITIONS = smoke ? 2 : 12;
const PROBES = smoke ? 4 : 25;
const WORDS_PER_CELL = smoke ? 2_000 : 20_000;
const OUTPUT_TOKENS = 400;
const MINUTE = 60_000;
const MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4.1' } as const;
type Provider = keyof typeof MODELS;
process.env.ANTHROPIC_API_KEY = 'bench-key-0000';
process.env.OPENAI_API_KEY = 'bench-key-0000';

const prices = builtInPriceTable();
const tokens = tokenCounter(countTokens);
const VOCABULARY =
  'the a file test run build error fix function return value type module import export config server request response cache token model prompt user assistant tool call read write edit search result line code change commit branch merge review diff patch log trace stack async await promise string number array object map set key index query table schema'.split(
    ' ',
  );
const baseGrid = personaGrid('model:unset', { positions: POSITIONS, probes: PROBES, wordsPerCell: WORDS_PER_CELL, vocabulary: VOCABULARY });

interface Ledger {
  billedUsd: number;
  batchLines: number;
  onlineCalls: number;
  followerReads: number;
  /** The `prompt_cache_retention` values the provider received. */
  retention: Set<string>;
}

type Retention = 'in_memory' | '24h' | undefined;

async function run(provider: Provider, queueMinutes: number, followerRoute: 'auto' | 'batch', dir: string, retention?: Retention) {
  const price = findPrice(`${provider}:${MODELS[provider]}`, prices)!;
  const anthropic = new AnthropicCache(tokens);
  const openai = new OpenAICache(tokens, { requestsPerMinute: Number.POSITIVE_INFINITY, readyOnAnswer: true });
  const ledger: Ledger = { billedUsd: 0, batchLines: 0, onlineCalls: 0, followerReads: 0, retention: new Set() };
  let clock = 0;
  let server: FakeBatchServer | undefined;
  const respond = (request: FakeRequest) => {
    server!.online.requests.length = 0;
    const batchId = request.headers['x-fake-batch-id'];
    let arrived = clock;
    let answered = clock + 1;
    if (batchId !== undefined) {
      const line = Number(request.headers['x-fake-batch-line']);
      const lines = Number(request.headers['x-fake-batch-lines']);
      arrived = clock - 90_000 + (30_000 * line) / Math.max(1, lines);
      answered = arrived + MINUTE;
    }
    const { blocks, cacheKey, retention: asked } = blocksOf(provider, request.body ?? {});
    const usage: CacheUsage = provider === 'anthropic' ? anthropic.bill(blocks, arrived, answered) : openai.bill(blocks, cacheKey, arrived, answered, asked);
    if (asked !== undefined) ledger.retention.add(asked);
    const maxTokens = Number(
      (request.body as { max_tokens?: number; max_completion_tokens?: number })?.max_tokens ??
        (request.body as { max_completion_tokens?: number })?.max_completion_tokens ??
        OUTPUT_TOKENS,
    );
    const output = Math.min(OUTPUT_TOKENS, maxTokens);
    const usd = (billedInput(usage, price) + output * price.output) / 1e6;
    if (batchId !== undefined) {
      ledger.batchLines += 1;
      ledger.billedUsd += usd * 0.5;
    } else {
      ledger.onlineCalls += 1;
      ledger.billedUsd += usd;
    }
    return {
      text: 'I would run the failing test first.',
      usage: { inputTokens: usage.inputTokens, outputTokens: output, cachedInputTokens: usage.cachedInputTokens, cacheWriteTokens: usage.cacheWriteTokens },
    };
  };
  server = await startFakeBatch({ provider, respond, pollsUntilDone: queueMinutes + 1 });
  const store = RunStore.open(join(dir, `${provider}-${queueMinutes}-${followerRoute}-${retention ?? 'default'}.db`));
  const notes: string[] = [];
  try {
    const specs = withModel(baseGrid, `${provider}:${MODELS[provider]}@${server.baseURL}`);
    const runId = await store.createRun(TEST_MANIFEST);
    const summary = await runCellsBatch(store, runId, specs, {
      env: { ANTHROPIC_API_KEY: 'bench-key-0000', OPENAI_API_KEY: 'bench-key-0000' },
      pollIntervalMs: MINUTE,
      now: () => clock,
      sleep: async (ms) => {
        clock += ms;
      },
      followerRoute,
      notify: (line) => notes.push(line),
      costOf: (ref, usage) => costOf(ref, usage, prices),
      ...(retention === undefined ? {} : { cache: { openaiCacheRetention: retention } }),
    });
    if (summary.done !== specs.length) throw new Error(`${provider}/${queueMinutes}/${followerRoute}: ${summary.done} of ${specs.length} cells done`);
    return { ledger, summary, notes };
  } finally {
    await store.close();
    await server.close();
  }
}

const usd = (x: number) => `$${x.toFixed(2)}`;
const dir = mkdtempSync(join(tmpdir(), 'echolens-batch-gap-bench-'));
let failures = 0;
try {
  console.log(`grid: ${baseGrid.length} cells, ~${WORDS_PER_CELL.toLocaleString('en-US')} words of context a cell; virtual clock, polls every minute`);
  const settings: Array<{ provider: Provider; retention: Retention; title: string }> = [
    { provider: 'anthropic', retention: undefined, title: '' },
    { provider: 'openai', retention: 'in_memory', title: ', limits.openaiCacheRetention: in_memory' },
    { provider: 'openai', retention: undefined, title: ', no retention set (--batch sends 24h for this model)' },
  ];
  for (const { provider, retention, title } of settings) {
    console.log(`\n${provider}:${MODELS[provider]}${title}`);
    const base = await run(provider, 2, 'auto', dir, retention);
    const lost = await run(provider, 65, 'batch', dir, retention);
    const watched = await run(provider, 65, 'auto', dir, retention);
    if (provider === 'openai') console.log(`  prompt_cache_retention received: ${[...watched.ledger.retention].join(', ') || 'none'}`);
    const row = (label: string, r: typeof base) => {
      const c = r.summary.batchCache;
      const reads = c ? `${c.billedReads}/${c.expectedReads} follower cache reads` : `${r.summary.cacheReadCells} cells read the cache`;
      console.log(
        `${label.padEnd(44)} ${usd(r.ledger.billedUsd).padStart(9)}  ${(r.ledger.billedUsd / base.ledger.billedUsd).toFixed(3).padStart(6)}× no-gap  ${reads}; ${r.ledger.batchLines} batch lines, ${r.ledger.onlineCalls} online calls${c ? `; route ${Object.values(c.routes).join(',')}` : ''}`,
      );
    };
    row('2-min queue (no gap), cache watch', base);
    row('65-min queue, followers always batched', lost);
    row('65-min queue, cache watch', watched);
    for (const note of watched.notes.filter((n) => /followers:|warning|cache reads/.test(n))) console.log(`  run said: ${note}`);
    const ratio = watched.ledger.billedUsd / base.ledger.billedUsd;
    const warnedAndRewarmed = (watched.summary.batchCache?.rewarmCalls ?? 0) > 0 || watched.summary.batchCache?.routes[provider] === 'online';
    console.log(`  65-min gap ÷ no gap with the watch: ${ratio.toFixed(3)} (target ≤ 1.1, or re-warmed / sent online: ${warnedAndRewarmed ? 'yes' : 'no'})`);
    if (!smoke && ratio > 1.1 && !warnedAndRewarmed) failures += 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures > 0) {
  console.log(`\n${failures} target(s) missed`);
  process.exitCode = 1;
}
