/**
 * `--batch` and prompt caching stacked (issue 34 item 1): the dry-run figures on a paper-like
 * persona grid, and the bill of a batch run against fake batch servers that simulate the
 * providers' prompt caching and batch pricing.
 *
 * Grid: 12 positions × 25 probes × {real, filler} = 600 cells, one target, a shared system
 * prompt and about 20,000 words of context a cell (a breakpoint after it), then the probe.
 *
 * Part 1, dry run (`estimateCells`): naive, cached online, the earlier `--batch` figure
 * (half the naive one) and the batch × cache figure, for Claude Sonnet 4.5 and GPT-4.1.
 * Target: batch × cache ≤ 0.6 × cached online.
 *
 * Part 2, billing: `runCellsBatch` against `startFakeBatch` in front of an online fake whose
 * answers bill each request by the providers' published caching rules (bench/cache-sim.ts).
 * The simulated batch service (an assumption; neither provider documents it): a batch starts
 * 2 simulated minutes after it is submitted and fans its lines out over 30 s, each answered
 * 60 s after it starts, so a line never reads what another line of the same batch writes
 * (cache hits inside one batch are "best effort" in Anthropic's words; here they are none).
 * The OpenAI per-route overflow (about 15 requests a minute) is not applied to batch lines:
 * how OpenAI places batch lines is not published. Every batch line is billed at half the
 * online price; an Anthropic 1-hour cache write at 2× input. Answers are 400 tokens (the
 * estimate's expected length). Printed per provider: billed/naive for one batch of all cells
 * (`schedule: 'plan'`, the earlier runner) and for leaders-then-followers (`prefix`), the
 * bill against the dry run's batch × cache figure (target within 5%), and the runner's own
 * recorded spend. BENCH_SMOKE=1: 2 positions × 4 probes, 2,000 words a cell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { estimateCells } from '../src/models/estimate.js';
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
const QUEUE_MS = 2 * MINUTE;
const FAN_OUT_MS = 30_000;
const LATENCY_MS = 60_000;
const MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4.1' } as const;
type Provider = keyof typeof MODELS;

const prices = builtInPriceTable();
const tokens = tokenCounter(countTokens);
const VOCABULARY =
  'the a file test run build error fix function return value type module import export config server request response cache token model prompt user assistant tool call read write edit search result line code change commit branch merge review diff patch log trace stack async await promise string number array object map set key index query table schema'.split(
    ' ',
  );

/** The paper-like persona grid (bench/persona-grid.ts). */
const baseGrid = personaGrid('model:unset', { positions: POSITIONS, probes: PROBES, wordsPerCell: WORDS_PER_CELL, vocabulary: VOCABULARY });
const gridFor = (model: string) => withModel(baseGrid, model);

interface Ledger {
  lines: number;
  naiveUsd: number;
  billedUsd: number;
  cacheReads: number;
  cacheWrites: number;
}

/** The batch service's clock: each batch starts after the queue delay, once the previous one has ended. */
class BatchClock {
  private starts = new Map<string, number>();
  private ended = 0;

  arrival(batchId: string, line: number, lines: number): { arrived: number; answered: number } {
    let start = this.starts.get(batchId);
    if (start === undefined) {
      start = this.ended + QUEUE_MS;
      this.starts.set(batchId, start);
    }
    const arrived = start + (FAN_OUT_MS * line) / Math.max(1, lines);
    const answered = arrived + LATENCY_MS;
    this.ended = Math.max(this.ended, answered);
    return { arrived, answered };
  }
}

async function startBillingBatch(provider: Provider, ledger: Ledger): Promise<FakeBatchServer> {
  const price = findPrice(`${provider}:${MODELS[provider]}`, prices)!;
  const anthropic = new AnthropicCache(tokens);
  // Batch lines are not counted against the per-route rate (see the header).
  const openai = new OpenAICache(tokens, { requestsPerMinute: Number.POSITIVE_INFINITY, readyOnAnswer: true });
  const clock = new BatchClock();
  let server: FakeBatchServer | undefined;
  const respond = (request: FakeRequest) => {
    const batchId = request.headers['x-fake-batch-id'];
    if (batchId === undefined) throw new Error('this bench sends batch lines only');
    const { arrived, answered } = clock.arrival(batchId, Number(request.headers['x-fake-batch-line']), Number(request.headers['x-fake-batch-lines']));
    const { blocks, cacheKey } = blocksOf(provider, request.body ?? {});
    const usage: CacheUsage = provider === 'anthropic' ? anthropic.bill(blocks, arrived, answered) : openai.bill(blocks, cacheKey, arrived, answered);
    server!.online.requests.length = 0; // the log would hold every long body
    const online = (billedInput(usage, price) + OUTPUT_TOKENS * price.output) / 1e6;
    ledger.lines += 1;
    ledger.naiveUsd += (usage.inputTokens * price.input + OUTPUT_TOKENS * price.output) / 1e6;
    ledger.billedUsd += online * 0.5;
    if (usage.cachedInputTokens > 0) ledger.cacheReads += 1;
    if (usage.cacheWriteTokens > 0) ledger.cacheWrites += 1;
    return {
      text: 'I would run the failing test first, then read the stack trace.',
      usage: {
        inputTokens: usage.inputTokens,
        outputTokens: OUTPUT_TOKENS,
        cachedInputTokens: usage.cachedInputTokens,
        cacheWriteTokens: usage.cacheWriteTokens,
      },
    };
  };
  server = await startFakeBatch({ provider, respond, pollsUntilDone: 1 });
  return server;
}

async function batchRun(provider: Provider, schedule: 'plan' | 'prefix', dir: string) {
  const ledger: Ledger = { lines: 0, naiveUsd: 0, billedUsd: 0, cacheReads: 0, cacheWrites: 0 };
  const server = await startBillingBatch(provider, ledger);
  const store = RunStore.open(join(dir, `${provider}-${schedule}.db`));
  try {
    const specs = gridFor(`${provider}:${MODELS[provider]}@${server.baseURL}`);
    const runId = await store.createRun(TEST_MANIFEST);
    const summary = await runCellsBatch(store, runId, specs, {
      env: { ANTHROPIC_API_KEY: 'bench-key-0000', OPENAI_API_KEY: 'bench-key-0000' },
      schedule,
      pollIntervalMs: 0,
      sleep: async () => {},
      costOf: (ref, usage) => costOf(ref, usage, prices),
    });
    if (summary.done !== specs.length) throw new Error(`${provider}/${schedule}: ${summary.done} of ${specs.length} cells done`);
    return { ledger, summary, batches: server.batches.map((b) => b.customIds.length) };
  } finally {
    await store.close();
    await server.close();
  }
}

const line = (label: string, value: string, note = '') => console.log(`${label.padEnd(60)} ${value.padStart(10)}  ${note}`);
const usd = (x: number) => `$${x.toFixed(2)}`;
const dir = mkdtempSync(join(tmpdir(), 'echolens-batch-cache-bench-'));
let failures = 0;
try {
  console.log(
    `grid: ${POSITIONS} positions × ${PROBES} probes × 2 arms = ${baseGrid.length} cells, ~${WORDS_PER_CELL.toLocaleString('en-US')} words of context a cell`,
  );
  for (const provider of ['anthropic', 'openai'] as const) {
    const model = `${provider}:${MODELS[provider]}`;
    const estimate = estimateCells(gridFor(model), prices, { expectedOutputTokens: OUTPUT_TOKENS });
    const cached = estimate.expected!.dollars;
    const batchCache = estimate.expected!.batchDollars;
    console.log(`\n${model}`);
    line('dry run: naive', usd(estimate.dollars.low));
    line('dry run: cached online', usd(cached), `${(cached / estimate.dollars.low).toFixed(3)} of naive`);
    line('dry run: --batch before (half the naive figure)', usd(estimate.dollars.low / 2), `${(estimate.dollars.low / 2 / cached).toFixed(3)} × cached online`);
    line(
      'dry run: --batch now (batch × cache)',
      usd(batchCache),
      `${(batchCache / cached).toFixed(3)} × cached online (target ≤ 0.6); ${(batchCache / estimate.dollars.low).toFixed(3)} of naive`,
    );
    if (!smoke && batchCache > 0.6 * cached) failures += 1;

    const plan = await batchRun(provider, 'plan', dir);
    const waves = await batchRun(provider, 'prefix', dir);
    line(
      'billed/naive, one batch of every cell (schedule plan)',
      (plan.ledger.billedUsd / plan.ledger.naiveUsd).toFixed(3),
      `batches ${plan.batches.join('+')}; ${plan.ledger.cacheReads} cache reads`,
    );
    line(
      'billed/naive, leaders then followers (schedule prefix)',
      (waves.ledger.billedUsd / waves.ledger.naiveUsd).toFixed(3),
      `batches ${waves.batches.join('+')}; ${waves.ledger.cacheReads} cache reads, ${waves.ledger.cacheWrites} writes`,
    );
    const fit = waves.ledger.billedUsd / batchCache;
    line('simulated bill / dry-run batch × cache figure', fit.toFixed(3), `bill ${usd(waves.ledger.billedUsd)}; target within 5%`);
    line('runner-recorded spend / simulated bill', (waves.summary.spendUsd / waves.ledger.billedUsd).toFixed(3), `recorded ${usd(waves.summary.spendUsd)}`);
    if (!smoke && Math.abs(fit - 1) > 0.05) failures += 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures > 0) {
  console.log(`\n${failures} target(s) missed`);
  process.exitCode = 1;
}
