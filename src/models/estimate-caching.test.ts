import { describe, expect, it } from 'vitest';
import { budgetProblems, budgetReserve } from '../experiment/preflight.js';
import type { CellSpec } from '../store/types.js';
import { EXPECTED_COST_MARGIN, estimateCells, estimateLines } from './estimate.js';
import { builtInPriceTable } from './prices.js';
import { countTokens } from './token-count.js';
import type { ChatMessage } from './types.js';

const prices = builtInPriceTable();
const prefixText = (tag: string) => Array.from({ length: 800 }, (_, i) => `${tag} line ${i} of the session`).join('\n');

/** `groups` shared prefixes × `probes` questions, the prefix marked as a breakpoint (as persona plans do). */
function grid(model: string, groups: number, probes: number): CellSpec[] {
  const specs: CellSpec[] = [];
  for (let g = 0; g < groups; g += 1) {
    for (let p = 0; p < probes; p += 1) {
      const messages: ChatMessage[] = [
        { role: 'user', content: prefixText(`g${g}`) },
        { role: 'assistant', content: 'Understood.', cacheBreakpoint: true },
        { role: 'user', content: `Probe ${p}: what now?` },
      ];
      specs.push({ request: { model, messages, params: { maxTokens: 400 }, sample: 0 }, labels: { g, p } });
    }
  }
  return specs;
}

describe('estimates that know caching and batch', () => {
  it('prices an Anthropic grid as one cache write and reads per group, by hand', () => {
    const specs = grid('anthropic:claude-sonnet-4-5', 3, 10);
    const e = estimateCells(specs, prices, { expectedOutputTokens: 100 });
    const prefixTokens = 3 + 4 + countTokens(prefixText('g0')) + 4 + countTokens('Understood.');
    expect(prefixTokens).toBeGreaterThan(1024);
    // Each group's prefix differs in its tag only: the same count for every group.
    expect(e.expected!.cacheWriteTokens).toBe(3 * prefixTokens);
    expect(e.expected!.cachedInputTokens).toBe(3 * 9 * prefixTokens);
    const plain = e.inputTokens - 30 * prefixTokens;
    const byHand = (3 * prefixTokens * 3.75 + 27 * prefixTokens * 0.3 + plain * 3 + 30 * 100 * 15) / 1e6;
    expect(e.expected!.dollars).toBeCloseTo(byHand, 10);
    expect(e.expected!.dollars / e.dollars.low).toBeLessThan(0.3);
    // --batch: the same reads and writes at half price, each write at the 1-hour price (2 × $3).
    const batchByHand = (3 * prefixTokens * 6 + 27 * prefixTokens * 0.3 + plain * 3 + 30 * 100 * 15) / 1e6 / 2;
    expect(e.expected!.batchDollars).toBeCloseTo(batchByHand, 10);
    expect(e.perModel[0]!.batchDollars).toBeCloseTo(batchByHand, 10);
    expect(estimateCells(specs, prices, { expectedOutputTokens: 100, batchCacheTtl: '5m' }).expected!.batchDollars).toBeCloseTo(byHand / 2, 10);
  });

  it('prices --batch as batch × cache for OpenAI, and online (cached) for providers without a batch API', () => {
    const openai = estimateCells(grid('openai:gpt-4.1', 2, 5), prices, { expectedOutputTokens: 100 });
    expect(openai.expected!.batchDollars).toBeCloseTo(openai.expected!.dollars / 2, 12);
    const mixed = estimateCells([...grid('openai:gpt-4.1', 2, 5), ...grid('google:gemini-2.5-flash', 2, 5)], prices, { expectedOutputTokens: 100 });
    const gemini = mixed.perModel.find((m) => m.model.startsWith('google'))!;
    expect(gemini.expectedDollars).not.toBeNull();
    expect(gemini.batchDollars).toBe(gemini.expectedDollars);
    expect(mixed.expected!.batchDollars).toBeCloseTo(openai.expected!.dollars / 2 + gemini.expectedDollars!, 12);
  });

  it('prices OpenAI reads in 128-token steps with no write premium, and caches nothing below the minimum', () => {
    const e = estimateCells(grid('openai:gpt-4.1', 2, 5), prices, { expectedOutputTokens: 100 });
    expect(e.expected!.cacheWriteTokens).toBe(0);
    expect(e.expected!.cachedInputTokens % 128).toBe(0);
    expect(e.expected!.cachedInputTokens).toBeGreaterThan(0);
    const short: CellSpec[] = [0, 1, 2].map((p) => ({
      request: {
        model: 'anthropic:claude-sonnet-4-5',
        messages: [
          { role: 'user', content: 'hi', cacheBreakpoint: true },
          { role: 'user', content: `q${p}` },
        ],
        params: {},
        sample: 0,
      },
      labels: {},
    }));
    const none = estimateCells(short, prices);
    expect(none.expected).toMatchObject({ cachedInputTokens: 0, cacheWriteTokens: 0 });
    expect(none.expected!.dollars).toBeCloseTo(none.dollars.low, 12);
  });

  it('prints naive, expected-with-caching and batch figures side by side', () => {
    const e = estimateCells(grid('anthropic:claude-sonnet-4-5', 2, 4), prices);
    const lines = estimateLines(e);
    const line = lines.find((l) => l.startsWith('cost side by side'));
    expect(line).toBe(
      `cost side by side: naive $${e.dollars.low.toFixed(2)} · expected with prompt caching $${e.expected!.dollars.toFixed(2)} · with --batch (batch × cache) $${e.expected!.batchDollars.toFixed(2)} (${e.expected!.cachedInputTokens.toLocaleString('en-US')} input tokens read from the prompt cache, ${e.expected!.cacheWriteTokens.toLocaleString('en-US')} written)`,
    );
    expect(lines.at(-1)).toBe('nothing was called (--dry-run)');
  });

  it('--max-cost checks the expected figure with its margin, never more than the naive figure', () => {
    const e = estimateCells(grid('anthropic:claude-sonnet-4-5', 3, 10), prices);
    expect(budgetReserve(e)).toBeCloseTo(e.expected!.dollars * EXPECTED_COST_MARGIN, 12);
    expect(budgetProblems(e, budgetReserve(e) * 1.01)).toEqual([]);
    expect(budgetProblems(e, budgetReserve(e) * 0.99)[0]?.message).toMatch(/with prompt caching about \$/);
    const { expected: _, ...naiveOnly } = e;
    expect(budgetReserve(naiveOnly)).toBe(e.dollars.low);
  });
});
