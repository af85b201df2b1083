/**
 * What prompt caching saves on a paper-like persona grid, old scheduling against new, and
 * how close the dry run's expected figure comes to the bill.
 *
 * Grid: 12 positions × 25 probes × {real, filler} = 600 cells, one target, about 80k tokens
 * a cell (synthetic session text and filler), concurrency 8, 20 s per call. Each provider
 * is a local fake server (127.0.0.1, the real wire format through the AI SDK adapters) that
 * bills every request by the provider's published caching rules (bench/cache-sim.ts).
 *
 * Time is simulated (discrete events): the server holds each call for its latency on a
 * virtual clock, the runner gets the same clock (`now`, `sleep`: cache lifetimes, latency
 * estimates, OpenAI pacing), and virtual time jumps to the next timer only once every call
 * in flight is waiting in the server. Work on the machine takes no virtual time, so the
 * figures do not depend on machine load (four runs of 25 virtual minutes each took 3.5 CPU
 * minutes and 21 minutes of wall time on a shared, heavily loaded 2-core machine).
 *
 * Printed per provider: billed/naive input for the earlier order (`prefix-fifo`, no cache
 * key) and the cache-aware order (`prefix`), targets ≤ 0.15 (Anthropic) and ≤ 0.35
 * (OpenAI); and the dry run's expected cost against the simulated bill (target within 1.5×).
 * The estimate and the simulator apply the same published rules and the same tokenizer, so
 * that figure checks that the scheduler achieves what the estimate assumes, not the rules.
 * BENCH_SMOKE=1: 2 positions × 4 probes at about 3k tokens a cell.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAdapter } from '../src/models/create-adapter.js';
import { estimateCells } from '../src/models/estimate.js';
import { builtInPriceTable, costOf, findPrice } from '../src/models/prices.js';
import { startFakeAnthropic, startFakeOpenAI, type FakeRequest, type FakeServer } from '../src/models/testing/index.js';
import { countTokens } from '../src/models/token-count.js';
import type { ModelAdapter } from '../src/models/types.js';
import { cellIdentity } from '../src/store/keys.js';
import { RunStore } from '../src/store/run-store.js';
import { runCells } from '../src/store/runner.js';
import { TEST_MANIFEST } from '../src/store/testing/fakes.js';
import { seededRandom } from '../src/core/random.js';
import { AnthropicCache, billedInput, blocksOf, type CacheUsage, OpenAICache, tokenCounter } from './cache-sim.js';
import { personaGrid, withModel } from './persona-grid.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const POSITIONS = smoke ? 2 : 12;
const PROBES = smoke ? 4 : 25;
const WORDS_PER_CELL = smoke ? 3_000 : 80_000;
const CONCURRENCY = 8;
const LATENCY_MS = 20_000;
const MODELS = { anthropic: 'claude-sonnet-4-5', openai: 'gpt-4.1' } as const;
type Provider = keyof typeof MODELS;

const prices = builtInPriceTable();
const tokens = tokenCounter(countTokens);

const VOCABULARY =
  'the a file test run build error fix function return value type module import export config server request response cache token model prompt user assistant tool call read write edit search result line code change commit branch merge review diff patch log trace stack async await promise string number array object map set key index query table schema field record store open close start stop retry limit rate budget cost price batch queue lane worker thread process signal event stream chunk buffer parse render format escape report chart summary metric score probe judge label step question answer session position filler arm'.split(
    ' ',
  );

/** The persona grid (bench/persona-grid.ts): a shared system prompt, a ~80k-token context per position and arm, then a probe. */
const baseGrid = personaGrid('model:unset', { positions: POSITIONS, probes: PROBES, wordsPerCell: WORDS_PER_CELL, vocabulary: VOCABULARY });
const gridFor = (model: string) => withModel(baseGrid, model);
// Count every text's tokens before any clock starts: counting 80k-token contexts inside a
// timed run would pass as minutes of virtual time.
for (const spec of baseGrid) for (const message of spec.request.messages) tokens(message.content);

/**
 * Discrete-event time: virtual time stands still while anything is being worked on and jumps
 * to the next timer once every call in flight is waiting in the server (and the runner waits
 * on nothing but timers). Machine load therefore changes how long the bench takes, never what
 * it measures.
 */
class VirtualClock {
  private virtual = 0;
  private timers: Array<{ at: number; seq: number; fire: () => void }> = [];
  private seq = 0;
  private poller: NodeJS.Timeout | undefined;
  private stable = 0;
  /** Calls the runner has started and not yet seen answered. */
  generating = 0;
  /** Calls the server holds in their simulated latency. */
  sleeping = 0;

  now = (): number => this.virtual;

  sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
    new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(signal.reason ?? new Error('aborted'));
      const timer = { at: this.virtual + Math.max(0, ms), seq: this.seq++, fire: resolve };
      this.timers.push(timer);
      signal?.addEventListener('abort', () => {
        this.timers = this.timers.filter((t) => t !== timer);
        reject(signal.reason ?? new Error('aborted'));
      });
    });

  async serverLatency(ms: number): Promise<void> {
    this.sleeping += 1;
    try {
      await this.sleep(ms);
    } finally {
      this.sleeping -= 1;
    }
  }

  start(): void {
    this.poller = setInterval(() => {
      if (this.timers.length === 0 || this.generating !== this.sleeping) {
        this.stable = 0;
        return;
      }
      // Three quiet polls in a row: nothing is in transit between runner and server.
      this.stable += 1;
      if (this.stable < 3) return;
      this.stable = 0;
      this.timers.sort((a, b) => a.at - b.at || a.seq - b.seq);
      const next = this.timers.shift()!;
      this.virtual = Math.max(this.virtual, next.at);
      next.fire();
    }, 1);
  }

  stop(): void {
    clearInterval(this.poller);
  }
}

interface Ledger {
  calls: number;
  naiveInputUsd: number;
  billedInputUsd: number;
  billedUsd: number;
  writes: number;
  overflowed: number;
  maxVirtualMs: number;
}

async function startBillingServer(provider: Provider, clock: VirtualClock, ledger: Ledger): Promise<FakeServer> {
  const price = findPrice(`${provider}:${MODELS[provider]}`, prices)!;
  const anthropic = new AnthropicCache(tokens);
  const openai = new OpenAICache(tokens);
  const random = seededRandom(provider === 'anthropic' ? 3 : 5);
  let server: FakeServer | undefined;
  const respond = async (request: FakeRequest) => {
    const arrived = clock.now();
    const latency = LATENCY_MS * (0.9 + 0.2 * random());
    const { blocks, cacheKey } = blocksOf(provider, request.body ?? {});
    const usage: CacheUsage =
      provider === 'anthropic' ? anthropic.bill(blocks, arrived, arrived + latency) : openai.bill(blocks, cacheKey, arrived, arrived + latency);
    server!.requests.length = 0; // the log would hold every 300 KB body
    const outputTokens = Math.round(150 + 500 * random());
    const inputUsd = billedInput(usage, price) / 1e6;
    ledger.calls += 1;
    ledger.naiveInputUsd += (usage.inputTokens * price.input) / 1e6;
    ledger.billedInputUsd += inputUsd;
    ledger.billedUsd += inputUsd + (outputTokens * price.output) / 1e6;
    if (usage.cacheWriteTokens > 0) ledger.writes += 1;
    if (usage.overflowed) ledger.overflowed += 1;
    await clock.serverLatency(latency);
    ledger.maxVirtualMs = Math.max(ledger.maxVirtualMs, clock.now());
    return {
      text: 'I would run the failing test first, then read the stack trace.',
      usage: {
        inputTokens: usage.inputTokens,
        outputTokens,
        cachedInputTokens: usage.cachedInputTokens,
        cacheWriteTokens: usage.cacheWriteTokens,
      },
    };
  };
  server = provider === 'anthropic' ? await startFakeAnthropic({ respond }) : await startFakeOpenAI({ respond });
  return server;
}

async function runOnce(provider: Provider, schedule: 'prefix-fifo' | 'prefix', dir: string) {
  const ledger: Ledger = { calls: 0, naiveInputUsd: 0, billedInputUsd: 0, billedUsd: 0, writes: 0, overflowed: 0, maxVirtualMs: 0 };
  const clock = new VirtualClock();
  const server = await startBillingServer(provider, clock, ledger);
  const store = RunStore.open(join(dir, `${provider}-${schedule}.db`));
  try {
    const model = `${provider}:${MODELS[provider]}`;
    const specs = gridFor(`${model}@${server.baseURL}`);
    const runId = await store.createRun(TEST_MANIFEST);
    // Register the cells before the clock starts (writing 600 long requests takes seconds).
    await store.registerCells(
      runId,
      specs,
      specs.map((spec) => cellIdentity(spec.request)),
    );
    clock.start();
    const summary = await runCells(store, runId, specs, {
      adapterFor: (ref) => counted(createAdapter(ref, { env: { ANTHROPIC_API_KEY: 'bench-key-0000', OPENAI_API_KEY: 'bench-key-0000' } }), clock),
      concurrency: CONCURRENCY,
      schedule,
      // The earlier runner sent no prompt_cache_key.
      cache: schedule === 'prefix-fifo' ? { promptCacheKey: false } : {},
      costOf: (ref, usage) => costOf(ref, usage, prices),
      now: clock.now,
      sleep: clock.sleep,
    });
    if (summary.done !== specs.length) throw new Error(`${provider}/${schedule}: ${summary.done} of ${specs.length} cells done`);
    // The estimate is priced on the model without the base URL (same price entry).
    const estimate = estimateCells(gridFor(model), prices);
    return { ledger, summary, estimate, cells: specs.length };
  } finally {
    clock.stop();
    await store.close();
    await server.close();
  }
}

/** The adapter, counting the calls in flight for the virtual clock. */
function counted(adapter: ModelAdapter, clock: VirtualClock): ModelAdapter {
  return {
    ref: adapter.ref,
    provider: adapter.provider,
    modelId: adapter.modelId,
    generate: async (request, options) => {
      clock.generating += 1;
      try {
        return await adapter.generate(request, options);
      } finally {
        clock.generating -= 1;
      }
    },
  };
}

const dir = mkdtempSync(join(tmpdir(), 'echolens-cache-bench-'));
const line = (label: string, value: string, note = '') => console.log(`${label.padEnd(58)} ${value.padStart(12)}  ${note}`);
const ratio = (x: number) => x.toFixed(3);
let failures = 0;
try {
  console.log(
    `grid: ${POSITIONS} positions × ${PROBES} probes × 2 arms = ${POSITIONS * PROBES * 2} cells, ~${WORDS_PER_CELL.toLocaleString('en-US')} words a cell, ` +
      `concurrency ${CONCURRENCY}, ${LATENCY_MS / 1000} s a call (simulated time)`,
  );
  for (const provider of ['anthropic', 'openai'] as const) {
    const target = provider === 'anthropic' ? 0.15 : 0.35;
    const old = await runOnce(provider, 'prefix-fifo', dir);
    const fresh = await runOnce(provider, 'prefix', dir);
    const oldRatio = old.ledger.billedInputUsd / old.ledger.naiveInputUsd;
    const newRatio = fresh.ledger.billedInputUsd / fresh.ledger.naiveInputUsd;
    console.log(`\n${provider}:${MODELS[provider]}`);
    line(
      'billed/naive input, earlier order (prefix-fifo, no key)',
      ratio(oldRatio),
      `${old.ledger.writes} cache writes, ${old.ledger.overflowed} overflowed, ${(old.ledger.maxVirtualMs / 60_000).toFixed(1)} virtual min`,
    );
    line(
      'billed/naive input, cache-aware order (prefix)',
      ratio(newRatio),
      `target ≤ ${target}; ${fresh.ledger.writes} cache writes, ${fresh.ledger.overflowed} overflowed, ${(fresh.ledger.maxVirtualMs / 60_000).toFixed(1)} virtual min`,
    );
    const recorded = fresh.summary.spendUsd;
    line(
      'simulated bill, cache-aware order (USD)',
      `$${fresh.ledger.billedUsd.toFixed(2)}`,
      `runner recorded $${recorded.toFixed(2)} from the usage it was sent`,
    );
    const expected = fresh.estimate.expected!.dollars;
    line(
      'dry run: naive / expected with caching / batch (USD)',
      `$${fresh.estimate.dollars.low.toFixed(2)}`,
      `$${expected.toFixed(2)} / $${fresh.estimate.expected!.batchDollars.toFixed(2)}`,
    );
    const fit = Math.max(expected / fresh.ledger.billedUsd, fresh.ledger.billedUsd / expected);
    line('dry-run expected vs simulated bill', `${fit.toFixed(2)}×`, 'target within 1.5×');
    if (!smoke && newRatio > target) failures += 1;
    if (!smoke && fit > 1.5) failures += 1;
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
if (failures > 0) {
  console.log(`\n${failures} target(s) missed`);
  process.exitCode = 1;
}
