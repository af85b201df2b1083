/**
 * The memory audit's labeler as a cacheable prefix (issue 34): billed / naive, in one run.
 *
 *   1. the dry-run estimate of the memory example (examples/memory-sim.yaml) with a Sonnet 4.5,
 *      a GPT-4.1 and a Haiku 4.5 labeler: expected (with prompt caching) / naive, total and
 *      input only (target ≤ 0.5 total for Sonnet; Haiku 4.5's 4,096-token minimum is above the
 *      labeler's static part, so it stays at 1);
 *   2. billed / naive input for labeler cells run through `runCells` and the AI SDK adapter
 *      against the fake Anthropic and OpenAI servers, which bill as the providers' caches do
 *      (bench/cache-sim.ts): the current prompt against the earlier shape (static part inside
 *      the user turn, no breakpoint), same cells.
 *   3. a whole 980-cell labeler stage on one OpenAI prefix: wall time against the ideal at
 *      concurrency 8 (the pace per cache key must not idle the slots) and billed / naive input.
 * Time is scaled (see billedRatio). BENCH_SMOKE=1: 20 labeler cells instead of 300, a 40-cell stage.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { registerBuiltinSimProfiles } from '../src/builtin-sims.js';
import { legacyLabelerMessages } from '../src/memory-drift/labeler.js';
import { loadBuiltinOntology } from '../src/memory-drift/ontology.js';
import { dryRunMemory, labelingItem, loadMemoryConfig, memoryRunner } from '../src/memory-drift/run.js';
import { createAdapter } from '../src/models/create-adapter.js';
import { builtInPriceTable, findPrice } from '../src/models/prices.js';
import { type FakeRequest, type FakeServer, startFakeAnthropic, startFakeOpenAI } from '../src/models/testing/index.js';
import { countTokens } from '../src/models/token-count.js';
import { RunStore } from '../src/store/run-store.js';
import { runCells } from '../src/store/runner.js';
import { TEST_MANIFEST } from '../src/store/testing/fakes.js';
import type { CellSpec } from '../src/store/types.js';
import { AnthropicCache, blocksOf, OpenAICache, tokenCounter } from './cache-sim.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const CELLS = smoke ? 20 : 300;
const STAGE_CELLS = smoke ? 40 : 980;
const CONCURRENCY = 8;
const LATENCY_REAL_MS = 40;
const TIME_SCALE = 50;
const here = dirname(fileURLToPath(import.meta.url));
const example = join(here, '..', 'examples', 'memory-sim.yaml');
const prices = builtInPriceTable();
const tokens = tokenCounter(countTokens);
const line = (label: string, value: string, note = '') => console.log(`${label.padEnd(60)} ${value.padStart(8)}  ${note}`);

registerBuiltinSimProfiles();

async function estimateRatios(labeler: string): Promise<{ total: number; input: number }> {
  const config = loadMemoryConfig(example, [`labeler=${labeler}`]);
  const input = await memoryRunner.prepare(config);
  const { estimate } = dryRunMemory(config, input.stimuli, memoryRunner.plan(config, input));
  const model = estimate.perModel.find((m) => m.model === labeler)!;
  const price = findPrice(labeler, prices)!;
  const naiveInput = model.inputTokens * price.input;
  const plain = model.inputTokens - model.cachedInputTokens - model.cacheWriteTokens;
  const billedInput =
    plain * price.input + model.cachedInputTokens * (price.cachedInput ?? price.input) + model.cacheWriteTokens * (price.cacheWrite ?? price.input);
  return { total: estimate.expected!.dollars / estimate.dollars.low, input: billedInput / naiveInput };
}

/** Labeler cells of distinct step lists, in the current shape or the earlier one. */
function labelerSpecs(model: string, shape: 'current' | 'earlier', cells: number): CellSpec[] {
  const config = loadMemoryConfig(example, [`labeler=${model}`]);
  const ontology = loadBuiltinOntology();
  return Array.from({ length: cells }, (_, i) => {
    const steps = Array.from({ length: 5 }, (_, s) => `Step ${s + 1} of answer ${i}: weighing what matters most here and why.`);
    const spec = labelingItem(steps, config, { labeler: model, ontology, labels: { stage: 'labeling' } }).spec;
    if (shape === 'earlier') return { ...spec, request: { ...spec.request, messages: legacyLabelerMessages(spec.request.messages)! } };
    return spec;
  });
}

/**
 * Runs the cells against a fake server that bills like the provider's cache; billed / naive
 * input, and the stage's wall time against the ideal at its concurrency. Time is scaled: each
 * call is held LATENCY_REAL_MS of real time, and the clock the scheduler and the billing read
 * runs TIME_SCALE× faster, so a call takes about 2 s of simulated time and OpenAI's rate per
 * cache key (15 a minute) bites as it would on a real stage.
 */
async function billedRatio(
  provider: 'anthropic' | 'openai',
  modelId: string,
  shape: 'current' | 'earlier',
  dir: string,
  cells = CELLS,
): Promise<{ billed: number; wallOfIdeal: number; keys: number }> {
  const price = findPrice(`${provider}:${modelId}`, prices)!;
  const anthropic = new AnthropicCache(tokens);
  const openai = new OpenAICache(tokens);
  let naive = 0;
  let billed = 0;
  let server: FakeServer | undefined;
  const start = Date.now();
  const clock = () => start + (Date.now() - start) * TIME_SCALE;
  let latencySum = 0;
  const keys = new Set<string>();
  const respond = async (request: FakeRequest) => {
    const sent = clock();
    await new Promise((resolve) => setTimeout(resolve, LATENCY_REAL_MS));
    const now = clock();
    latencySum += now - sent;
    const { blocks } = blocksOf(provider, request.body ?? {});
    const key = request.body?.prompt_cache_key;
    if (typeof key === 'string') keys.add(key);
    const usage = provider === 'anthropic' ? anthropic.bill(blocks, sent, now) : openai.bill(blocks, typeof key === 'string' ? key : undefined, sent, now);
    server!.requests.length = 0;
    const plain = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens;
    naive += usage.inputTokens * price.input;
    billed += plain * price.input + usage.cachedInputTokens * (price.cachedInput ?? price.input) + usage.cacheWriteTokens * (price.cacheWrite ?? price.input);
    const labels = Array.from({ length: 5 }, (_, i) => ({ step: i + 1, label: 'unmapped' }));
    return {
      text: JSON.stringify({ labels }),
      usage: { inputTokens: usage.inputTokens, outputTokens: 60, cachedInputTokens: usage.cachedInputTokens, cacheWriteTokens: usage.cacheWriteTokens },
    };
  };
  server = provider === 'anthropic' ? await startFakeAnthropic({ respond }) : await startFakeOpenAI({ respond });
  const store = RunStore.open(join(dir, `${provider}-${shape}-${cells}.db`));
  let wall = 0;
  try {
    const specs = labelerSpecs(`${provider}:${modelId}@${server.baseURL}`, shape, cells);
    const began = clock();
    const result = await runCells(store, await store.createRun(TEST_MANIFEST), specs, {
      adapterFor: (ref) => createAdapter(ref, { env: { ANTHROPIC_API_KEY: 'bench-key', OPENAI_API_KEY: 'bench-key' } }),
      concurrency: CONCURRENCY,
      costOf: () => 0,
      now: clock,
      // Any wait (retries, rate limits) passes in scaled time too.
      sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms / TIME_SCALE)),
    });
    wall = clock() - began;
    if (result.done !== specs.length) throw new Error(`${provider}/${shape}: ${result.done} of ${specs.length} done`);
  } finally {
    await store.close();
    await server.close();
  }
  return { billed: billed / naive, wallOfIdeal: latencySum / CONCURRENCY / wall, keys: keys.size };
}

const dir = mkdtempSync(join(tmpdir(), 'echolens-labeler-cache-'));
try {
  console.log(`memory example (${example.split('/').slice(-2).join('/')}); fake-server runs: ${CELLS} labeler cells each`);
  for (const labeler of ['anthropic:claude-sonnet-4-5', 'openai:gpt-4.1', 'anthropic:claude-haiku-4-5']) {
    const r = await estimateRatios(labeler);
    line(`dry-run expected / naive, ${labeler}`, r.total.toFixed(3), `input only ${r.input.toFixed(3)}${labeler.includes('sonnet') ? '; target ≤ 0.5' : ''}`);
  }
  for (const [provider, modelId] of [
    ['anthropic', 'claude-sonnet-4-5'],
    ['openai', 'gpt-4.1'],
  ] as const) {
    const now = await billedRatio(provider, modelId, 'current', dir);
    const before = await billedRatio(provider, modelId, 'earlier', dir);
    line(`billed / naive input, ${provider}:${modelId}, static part as prefix`, now.billed.toFixed(3), `earlier prompt shape ${before.billed.toFixed(3)}`);
  }
  // A whole labeler stage on one OpenAI prefix: lanes keep the slots busy and the cache warm.
  const stage = await billedRatio('openai', 'gpt-4.1', 'current', dir, STAGE_CELLS);
  line(`${STAGE_CELLS}-cell stage, openai:gpt-4.1, wall time ideal / actual`, stage.wallOfIdeal.toFixed(3), `concurrency ${CONCURRENCY}, ~2 s a call`);
  line(`${STAGE_CELLS}-cell stage, openai:gpt-4.1, billed / naive input`, stage.billed.toFixed(3), `${stage.keys} cache keys`);
  // Control: the same stage where no pace applies (Anthropic); the gap to 1 is this process's own overhead.
  const control = await billedRatio('anthropic', 'claude-sonnet-4-5', 'current', dir, STAGE_CELLS);
  line(`${STAGE_CELLS}-cell stage, anthropic (no pace), wall time ideal / actual`, control.wallOfIdeal.toFixed(3), 'control');
} finally {
  rmSync(dir, { recursive: true, force: true });
}
