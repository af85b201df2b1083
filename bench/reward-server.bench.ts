/**
 * GRPO reward server throughput with the simulated labeler (sim:labeler measures nothing;
 * this times the server, the label cache, the cell runner and SQLite, not a model).
 *   Workload: 10,000 (question id, response) pairs in batches of 64 from 4 concurrent local
 *   clients, drawn from a pool of 2,000 distinct step-format responses (so repeats hit the cache).
 *   Baseline, measured in the same command: the same stream scored in-process with
 *   `scoreBatch` (no HTTP), on a fresh store and cache; the ratio shows what HTTP costs.
 * A second pass of the same stream (all labels cached) times HTTP, JSON and scoring alone.
 * Prints responses/s and the cache hit rate (first pass). BENCH_SMOKE=1: 256 responses from a pool of 64.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openExperimentRun } from '../src/experiment/runtime.js';
import '../src/memory-drift/mitigation/index.js';
import { CachedLabeler } from '../src/memory-drift/mitigation/reward-labeler.js';
import { scoreBatch, startRewardServer } from '../src/memory-drift/mitigation/reward-server.js';
import { PAPER_REWARD_WEIGHTS, type ReferenceMap } from '../src/memory-drift/mitigation/reward.js';
import { loadBuiltinOntology } from '../src/memory-drift/ontology.js';
import { SIM_STEP_CUES, SIM_SYMBOLS } from '../src/memory-drift/sim.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const TOTAL = smoke ? 256 : 10_000;
const POOL = smoke ? 64 : 2_000;
const BATCH = 64;
const CLIENTS = 4;
const QUESTIONS = 20;

// Seeded LCG so the workload is the same on every run.
let state = 42;
const rand = () => {
  state = (state * 1_103_515_245 + 12_345) % 2_147_483_648;
  return state / 2_147_483_648;
};
const pick = <T>(items: readonly T[]) => items[Math.floor(rand() * items.length)]!;
const trajectory = () => Array.from({ length: 2 + Math.floor(rand() * 5) }, () => pick(SIM_SYMBOLS));

const references: ReferenceMap = new Map(Array.from({ length: QUESTIONS }, (_, q) => [`q${q}`, trajectory()]));
const pool = Array.from({ length: POOL }, (_, i) => {
  const steps = trajectory().map((symbol, s) => `<step_${s + 1}>${pick(SIM_STEP_CUES[symbol]!.sentences)}</step_${s + 1}>`);
  return `<think>${steps.join('')}</think><answer>Answer ${i}.</answer>`;
});
const stream = Array.from({ length: TOTAL }, () => ({ questionId: `q${Math.floor(rand() * QUESTIONS)}`, response: pick(pool) }));
const batches: (typeof stream)[] = [];
for (let i = 0; i < stream.length; i += BATCH) batches.push(stream.slice(i, i + BATCH));

const dir = mkdtempSync(join(tmpdir(), 'echolens-reward-bench-'));
const ontology = loadBuiltinOntology();
const freshLabeler = async (name: string) => {
  const run = await openExperimentRun(join(dir, `${name}.db`), 'memory-reward', { bench: name }, 42);
  return { run, labeler: new CachedLabeler({ store: run.store, runId: run.runId, labeler: 'sim:labeler', ontology }) };
};
/** One throwaway response outside the pool: loads the adapter and prices before timing. */
const warmUp = async (labeler: CachedLabeler) => {
  const symbol = SIM_SYMBOLS[0]!;
  await labeler.labelAll([`<step_1>${SIM_STEP_CUES[symbol]!.sentences[0]}</step_1><step_2>warm-up</step_2>`]);
  labeler.stats.lookups = labeler.stats.memoryHits = labeler.stats.storeHits = labeler.stats.calls = labeler.stats.noSteps = 0;
};

/** Runs the batches on CLIENTS concurrent workers. */
async function drive(score: (batch: typeof stream) => Promise<number>): Promise<{ ms: number; scored: number }> {
  let next = 0;
  let scored = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: CLIENTS }, async () => {
      while (next < batches.length) {
        const batch = batches[next++]!;
        const count = await score(batch);
        scored += count;
      }
    }),
  );
  return { ms: performance.now() - start, scored };
}

const fmt = (n: number) => Math.round(n).toLocaleString('en-US');
const line = (label: string, value: string, note = '') => console.log(`${label.padEnd(48)} ${value.padStart(12)}  ${note}`);

try {
  console.log(`reward server bench${smoke ? ' (smoke)' : ''}: ${TOTAL} responses, pool ${POOL}, batch ${BATCH}, ${CLIENTS} clients, sim:labeler (simulated)`);

  const base = await freshLabeler('baseline');
  await warmUp(base.labeler);
  const baseline = await drive(async (batch) => (await scoreBatch(batch, { references, labeler: base.labeler, weights: PAPER_REWARD_WEIGHTS })).length);
  await base.run.store.close();

  const served = await freshLabeler('server');
  await warmUp(served.labeler);
  const server = await startRewardServer({ references, labeler: served.labeler, weights: PAPER_REWARD_WEIGHTS, port: 0 });
  let errors = 0;
  const post = async (batch: typeof stream) => {
    const res = await fetch(`${server.url}/openrlhf`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ query: batch.map((b) => b.response), prompts: batch.map(() => ''), labels: batch.map((b) => b.questionId) }),
    });
    if (res.status !== 200) throw new Error(`server answered ${res.status}`);
    const body = (await res.json()) as { rewards: number[]; extra_logs: { error: number[] } };
    errors += body.extra_logs.error.reduce((a, v) => a + v, 0);
    return body.rewards.length;
  };
  const http = await drive(post);
  const stats = { ...served.labeler.stats };
  // The same stream again: every label is cached, so this times HTTP, JSON and scoring alone.
  const warm = await drive(post);
  await server.close();
  await served.run.store.close();

  const s = stats;
  const baseRate = (baseline.scored / baseline.ms) * 1000;
  const httpRate = (http.scored / http.ms) * 1000;
  line('baseline: in-process scoreBatch', `${fmt(baseRate)}/s`, `${baseline.scored} responses in ${fmt(baseline.ms)} ms`);
  line(
    'server: POST /openrlhf from local clients',
    `${fmt(httpRate)}/s`,
    `${http.scored} responses in ${fmt(http.ms)} ms; ratio ${(httpRate / baseRate).toFixed(2)} × baseline`,
  );
  line('server, warm cache (all hits)', `${fmt((warm.scored / warm.ms) * 1000)}/s`, `${warm.scored} responses in ${fmt(warm.ms)} ms`);
  line(
    'label cache hit rate (in-memory)',
    `${((100 * s.memoryHits) / s.lookups).toFixed(1)} %`,
    `${s.memoryHits}/${s.lookups} lookups; ${s.calls} labeler calls for ${POOL} distinct responses`,
  );
  line('per-item errors', String(errors));
  if (http.scored !== TOTAL) throw new Error(`scored ${http.scored} of ${TOTAL}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
