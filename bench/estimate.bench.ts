/**
 * Plan estimate speed (`estimateCells`): a persona-style plan where long
 * prefixes (~30,000 characters) are shared by many cells (arms × probes × samples).
 * Baseline, measured in the same command: tokenizing every message of every
 * cell (no reuse of counts), which is what a naive estimate would do.
 * BENCH_SMOKE=1: tiny sizes.
 */
import { countTokens } from 'gpt-tokenizer/encoding/o200k_base';
import { estimateCells } from '../src/models/estimate.js';
import type { PriceTable } from '../src/models/prices.js';
import type { CellSpec } from '../src/store/types.js';

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
const PREFIXES = smoke ? 3 : 40;
const PROBES = smoke ? 2 : 10;
const SAMPLES = smoke ? 2 : 5;
const PREFIX_CHARS = smoke ? 2_000 : 30_000;

function prefix(i: number): string {
  const words = ['session', 'tool', 'result', 'assistant', 'edited', 'file', 'tests', 'passed', 'λ', '構造', 'refactor'];
  let text = '';
  let state = i + 1;
  while (text.length < PREFIX_CHARS) {
    state = (state * 1103515245 + 12345) >>> 0;
    text += `${words[state % words.length]} `;
  }
  return text.slice(0, PREFIX_CHARS);
}

const specs: CellSpec[] = [];
for (let p = 0; p < PREFIXES; p++) {
  const context = prefix(p);
  for (let q = 0; q < PROBES; q++) {
    for (let k = 0; k < SAMPLES; k++) {
      specs.push({
        request: {
          model: 'openai:gpt-4.1-mini',
          messages: [
            { role: 'user', content: context },
            { role: 'assistant', content: 'Understood.' },
            { role: 'user', content: `Probe ${q}: describe how you would proceed.` },
          ],
          params: { temperature: 0, maxTokens: 600 },
          sample: k,
        },
        labels: { prefix: p, probe: q },
      });
    }
  }
}
const prices: PriceTable = { freeProviders: [], models: [{ provider: 'openai', model: 'gpt-4.1-mini', input: 0.4, output: 1.6 }] };

function naive(plan: CellSpec[]): number {
  let total = 0;
  for (const spec of plan) for (const m of spec.request.messages) total += 4 + countTokens(m.content);
  return total + 3 * plan.length;
}

const t0 = performance.now();
const baselineTokens = naive(specs);
const baselineMs = performance.now() - t0;
const t1 = performance.now();
const estimate = estimateCells(specs, prices);
const estimateMs = performance.now() - t1;

if (estimate.inputTokens !== baselineTokens) {
  console.error(`mismatch: estimate ${estimate.inputTokens} tokens, baseline ${baselineTokens}`);
  process.exit(1);
}
const line = (label: string, value: string) => console.log(`${label.padEnd(50)} ${value.padStart(14)}`);
line(`plan: ${specs.length} cells, ${PREFIXES} prefixes of ${PREFIX_CHARS} chars`, `${estimate.inputTokens.toLocaleString('en-US')} tok`);
line('baseline: tokenize every message', `${baselineMs.toFixed(0)} ms`);
line('estimateCells (counts reused per distinct text)', `${estimateMs.toFixed(0)} ms`);
line('speed-up over baseline', `${(baselineMs / estimateMs).toFixed(1)}x`);
line('estimateCells cells/s', `${Math.round(specs.length / (estimateMs / 1000)).toLocaleString('en-US')}`);
