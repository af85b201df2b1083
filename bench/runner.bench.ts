/**
 * Cell runner throughput, store writes included.
 *   1. zero-latency in-process endpoint: cells/s (target ≥ 1,000/s)
 *   2. the same plan again, fully cached: cells/s (target ≥ 20,000/s)
 *   3. a 100 ms endpoint at concurrency 64: share of the ideal 640 cells/s (target ≥ 90 %)
 *   4. the same through the fake OpenAI-compatible HTTP server (real wire format,
 *      AI SDK adapter), when src/models/testing and the adapter factory are present.
 * Baseline, measured in the same command: the bare adapter loop without the
 * runner or store, so the ratio shows what the runner and SQLite cost.
 * BENCH_SMOKE=1: tiny sizes.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ModelAdapter } from '../src/models/types.js';
import { RunStore } from '../src/store/run-store.js';
import { runCells } from '../src/store/runner.js';
import { FakeModels, makeSpecs, TEST_MANIFEST } from '../src/store/testing/fakes.js';
import type { CellSpec } from '../src/store/types.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const FAST_CELLS = smoke ? 300 : 20_000;
const SLOW_CELLS = smoke ? 128 : 1_920;
const CONCURRENCY = 64;
const here = dirname(fileURLToPath(import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'echolens-bench-'));

const fmt = (n: number) => (n >= 100 ? Math.round(n).toLocaleString('en-US') : n.toFixed(1));
const line = (label: string, value: string, note = '') => console.log(`${label.padEnd(52)} ${value.padStart(14)}  ${note}`);

/** Wall time and this process's CPU time (user + system): on a loaded machine the two part ways. */
async function timed<T>(fn: () => Promise<T>): Promise<{ ms: number; cpuMs: number; value: T }> {
  const cpu = process.cpuUsage();
  const start = performance.now();
  const value = await fn();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000, value };
}

/** The cheapest possible endpoint: a constant answer on the next microtask. */
function instantAdapter(ref: string): ModelAdapter {
  return {
    ref,
    provider: ref.slice(0, ref.indexOf(':')),
    modelId: ref.slice(ref.indexOf(':') + 1),
    generate: async () => ({
      text: 'ok',
      finishReason: 'stop',
      usage: { inputTokens: 12, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
      latencyMs: 0,
    }),
  };
}

/** `CONCURRENCY` loops pulling from one list: the least a scheduler can do. */
async function barePool(specs: CellSpec[], adapter: ModelAdapter): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < specs.length) {
      const spec = specs[next++]!;
      await adapter.generate(spec.request);
    }
  };
  await Promise.all(Array.from({ length: CONCURRENCY }, worker));
}

async function runPlan(file: string, specs: CellSpec[], adapterFor: (ref: string) => ModelAdapter) {
  const store = RunStore.open(file);
  const runId = await store.createRun(TEST_MANIFEST);
  const { ms, cpuMs, value } = await timed(() => runCells(store, runId, specs, { adapterFor, concurrency: CONCURRENCY }));
  await store.close();
  return { ms, cpuMs, summary: value };
}

try {
  const load = (await import('node:os')).loadavg()[0]!;
  const cores = (await import('node:os')).availableParallelism();
  console.log(
    `cells: fast ${FAST_CELLS}, slow ${SLOW_CELLS}; concurrency ${CONCURRENCY}${smoke ? ' (smoke)' : ''}; ` +
      `load average ${load.toFixed(1)} on ${cores} cores (rates are wall-clock; cpu/s = cells per CPU-second of this process)`,
  );

  // Warm-up: the runner loads src/models (prices) on first use; keep that one-time import out of the timings.
  await import('../src/models/index.js');

  // Baseline: the bare endpoint called in a loop, no runner, no store.
  const specs = makeSpecs(FAST_CELLS);
  const bare = instantAdapter('fake:m');
  const baseline = await timed(async () => {
    for (const spec of specs) await bare.generate(spec.request);
  });
  const baselineRate = FAST_CELLS / (baseline.ms / 1000);
  line('baseline: bare endpoint loop (no runner, no store)', `${fmt(baselineRate)}/s`);

  // 1. Zero-latency endpoint through the runner, every result written to SQLite (WAL).
  const file = join(dir, 'fast.db');
  const fast = await runPlan(file, specs, instantAdapter);
  if (fast.summary.done !== FAST_CELLS) throw new Error(`expected ${FAST_CELLS} done, got ${fast.summary.done}`);
  const fastRate = FAST_CELLS / (fast.ms / 1000);
  line(
    '1. zero-latency endpoint + store writes',
    `${fmt(fastRate)}/s`,
    `${(fastRate / 1000).toFixed(2)}× target 1,000/s; ${fmt(FAST_CELLS / (fast.cpuMs / 1000))} cpu/s; ${(fastRate / baselineRate).toFixed(3)}× baseline`,
  );

  // 2. The same plan again: every cell from the store.
  const cachedModels = new FakeModels();
  const cached = await runPlan(file, specs, cachedModels.adapterFor);
  if (cached.summary.cached !== FAST_CELLS || cachedModels.totalCalls !== 0) throw new Error('re-run was not fully cached');
  const cachedRate = FAST_CELLS / (cached.ms / 1000);
  line(
    '2. fully cached re-run',
    `${fmt(cachedRate)}/s`,
    `${(cachedRate / 20_000).toFixed(2)}× target 20,000/s; ${fmt(FAST_CELLS / (cached.cpuMs / 1000))} cpu/s`,
  );

  // 3. A 100 ms endpoint at concurrency 64: ideal is 640 cells/s.
  const slowSpecs = makeSpecs(SLOW_CELLS, 'slow:m');
  const slow = await runPlan(join(dir, 'slow.db'), slowSpecs, new FakeModels({ delayMs: 100 }).adapterFor);
  const ideal = (CONCURRENCY * 1000) / 100;
  const slowRate = SLOW_CELLS / (slow.ms / 1000);
  // Baseline: the same endpoint driven by a bare pool of 64 loops (no runner, no store):
  // what this machine's event loop allows right now.
  const slowAdapter = new FakeModels({ delayMs: 100 }).adapterFor('slow:m');
  const pool = await timed(() => barePool(slowSpecs, slowAdapter));
  const poolRate = SLOW_CELLS / (pool.ms / 1000);
  line('3. baseline: bare pool of 64, 100 ms endpoint', `${fmt(poolRate)}/s`, `${((100 * poolRate) / ideal).toFixed(1)} % of ideal`);
  line(
    '3. 100 ms endpoint, concurrency 64 (in-process)',
    `${fmt(slowRate)}/s`,
    `${((100 * slowRate) / ideal).toFixed(1)} % of ideal ${ideal}/s (target ≥ 90 %); ${(slowRate / poolRate).toFixed(3)}× baseline`,
  );

  // 4. Through the fake OpenAI-compatible server, if the models helper's pieces are present.
  await wireBenchmarks(ideal);
} finally {
  rmSync(dir, { recursive: true, force: true });
}

async function wireBenchmarks(ideal: number): Promise<void> {
  const fakeServerFile = join(here, '..', 'src', 'models', 'testing', 'fake-openai.ts');
  const factoryFile = join(here, '..', 'src', 'models', 'create-adapter.ts');
  if (!existsSync(fakeServerFile) || !existsSync(factoryFile)) {
    line('4. fake OpenAI server', 'skipped', 'src/models/testing/fake-openai.ts or create-adapter.ts not present');
    return;
  }
  // Loaded by path at run time: these modules belong to the models layer and may move.
  const serverModule = '../src/models/testing/fake-openai.js';
  const factoryModule = '../src/models/create-adapter.js';
  const { startFakeOpenAI } = (await import(serverModule)) as {
    startFakeOpenAI: (options: { respond?: unknown }) => Promise<{ baseURL: string; close(): Promise<void> }>;
  };
  const { createAdapter } = (await import(factoryModule)) as { createAdapter: (ref: string) => ModelAdapter };
  let delayMs = 0;
  const server = await startFakeOpenAI({
    respond: async (request: { body?: { messages?: Array<{ content?: string }> } }) => {
      if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
      return { text: `answer to ${request.body?.messages?.at(-1)?.content ?? ''}` };
    },
  });
  try {
    const ref = `vllm:fake-model@${server.baseURL}`;
    const wireCells = smoke ? 100 : 3_000;
    const zero = await runPlan(join(dir, 'wire.db'), makeSpecs(wireCells, ref), createAdapter);
    if (zero.summary.done !== wireCells) throw new Error(`wire run: ${zero.summary.failed} failed`);
    line('4a. fake OpenAI server over HTTP, zero latency', `${fmt(wireCells / (zero.ms / 1000))}/s`, 'AI SDK adapter + JSON over 127.0.0.1');
    delayMs = 100;
    const slowCells = smoke ? 128 : 1_920;
    const slowWire = await runPlan(join(dir, 'wire-slow.db'), makeSpecs(slowCells, ref), createAdapter);
    if (slowWire.summary.done !== slowCells) throw new Error(`wire slow run: ${slowWire.summary.failed} failed`);
    const rate = slowCells / (slowWire.ms / 1000);
    const wirePool = await timed(() => barePool(makeSpecs(slowCells, ref), createAdapter(ref)));
    const wirePoolRate = slowCells / (wirePool.ms / 1000);
    line('4b. baseline: bare pool of 64 on the same server', `${fmt(wirePoolRate)}/s`, `${((100 * wirePoolRate) / ideal).toFixed(1)} % of ideal`);
    line(
      '4b. fake OpenAI server, 100 ms, concurrency 64',
      `${fmt(rate)}/s`,
      `${((100 * rate) / ideal).toFixed(1)} % of ideal ${ideal}/s; ${(rate / wirePoolRate).toFixed(3)}× baseline`,
    );
  } finally {
    await server.close();
  }
}
