import { countTokens } from './token-count.js';
import { requestKeys } from '../store/request-hash.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { CellSpec } from '../store/types.js';
import { DEFAULT_MAX_TOKENS } from './defaults.js';
import { findPrice, isFreeProvider, type PriceTable } from './prices.js';

/**
 * What a plan will cost before anything is called. Pure: counts tokens and
 * multiplies by prices.
 *
 * - Input tokens: o200k_base (the GPT-4o/4.1/5 tokenizer) over each message's
 *   text, plus 4 tokens per message and 3 per request for the chat format.
 *   Exact for OpenAI's current models only; for Claude, Llama, Qwen … an
 *   approximation (their tokenizers typically count 0–20% more).
 * - Output tokens: `max` is the hard upper bound (maxTokens, plus Anthropic's
 *   thinking budget); `expected` assumes min(max, expectedOutputTokens).
 * - Dollars: `low` = input at full price + expected output; `high` = input at
 *   full price + max output. Prompt-cache discounts are not assumed.
 * - Cells with identical requests run once (the store keys them by hash), so
 *   they are counted once.
 */
export interface PlanEstimate {
  cells: number;
  /** Specs whose request duplicates another's (not counted again). */
  duplicates: number;
  inputTokens: number;
  outputTokens: { expected: number; max: number };
  /** Over priced and free cells; `unpricedCells` are left out. */
  dollars: { low: number; high: number };
  unpricedCells: number;
  unpricedModels: string[];
  perModel: ModelEstimate[];
}

export interface ModelEstimate {
  model: string;
  cells: number;
  inputTokens: number;
  outputTokens: { expected: number; max: number };
  /** null when the model has no price. */
  dollars: { low: number; high: number } | null;
}

export interface EstimateOptions {
  /** Typical answer length assumed for the expected figures (default 400 tokens). */
  expectedOutputTokens?: number;
}

const PER_MESSAGE_TOKENS = 4;
const PER_REQUEST_TOKENS = 3;

export function estimateCells(
  specs: readonly CellSpec[],
  prices: PriceTable,
  options: EstimateOptions = {},
): PlanEstimate {
  const expectedPerCell = options.expectedOutputTokens ?? 400;
  if (!Number.isFinite(expectedPerCell) || expectedPerCell < 0) {
    throw new InvalidArgumentError('expectedOutputTokens', `must be a non-negative number, got ${expectedPerCell}`);
  }
  // Plans repeat long prefixes across arms, probes and samples: tokenize each distinct text once.
  const tokenCache = new Map<string, number>();
  const tokens = (text: string): number => {
    let n = tokenCache.get(text);
    if (n === undefined) {
      n = countTokens(text);
      tokenCache.set(text, n);
    }
    return n;
  };
  const seen = new Set<string>();
  const byModel = new Map<string, { cells: number; input: number; expected: number; max: number }>();
  let duplicates = 0;
  for (const spec of specs) {
    // The cell key, hashed incrementally: a long-context grid's requests are never serialized whole.
    const key = requestKeys(spec.request).key;
    if (seen.has(key)) {
      duplicates++;
      continue;
    }
    seen.add(key);
    const request = spec.request;
    let input = PER_REQUEST_TOKENS;
    for (const message of request.messages) input += PER_MESSAGE_TOKENS + tokens(message.content);
    const max = (request.params.maxTokens ?? DEFAULT_MAX_TOKENS) + (request.params.thinkingBudget ?? 0);
    const expected = Math.min(max, expectedPerCell);
    const entry = byModel.get(request.model) ?? { cells: 0, input: 0, expected: 0, max: 0 };
    entry.cells++;
    entry.input += input;
    entry.expected += expected;
    entry.max += max;
    byModel.set(request.model, entry);
  }

  const perModel: ModelEstimate[] = [];
  const unpricedModels: string[] = [];
  let unpricedCells = 0;
  let low = 0;
  let high = 0;
  for (const [model, t] of [...byModel.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    let dollars: ModelEstimate['dollars'];
    if (isFreeProvider(model, prices)) {
      dollars = { low: 0, high: 0 };
    } else {
      const price = findPrice(model, prices);
      dollars =
        price === undefined
          ? null
          : {
              low: (t.input * price.input + t.expected * price.output) / 1_000_000,
              high: (t.input * price.input + t.max * price.output) / 1_000_000,
            };
    }
    if (dollars === null) {
      unpricedModels.push(model);
      unpricedCells += t.cells;
    } else {
      low += dollars.low;
      high += dollars.high;
    }
    perModel.push({
      model,
      cells: t.cells,
      inputTokens: t.input,
      outputTokens: { expected: t.expected, max: t.max },
      dollars,
    });
  }
  return {
    cells: seen.size,
    duplicates,
    inputTokens: perModel.reduce((sum, m) => sum + m.inputTokens, 0),
    outputTokens: {
      expected: perModel.reduce((sum, m) => sum + m.outputTokens.expected, 0),
      max: perModel.reduce((sum, m) => sum + m.outputTokens.max, 0),
    },
    dollars: { low, high },
    unpricedCells,
    unpricedModels,
    perModel,
  };
}

/** The token and dollar lines every `--dry-run` prints under its plan line. */
export function estimateLines(e: PlanEstimate): string[] {
  return [
    `input tokens ≈ ${e.inputTokens.toLocaleString('en-US')}; output tokens expected ≈ ${e.outputTokens.expected.toLocaleString('en-US')}, at most ${e.outputTokens.max.toLocaleString('en-US')}`,
    `cost ≈ $${e.dollars.low.toFixed(2)} – $${e.dollars.high.toFixed(2)}${e.unpricedModels.length > 0 ? ` (no price for: ${e.unpricedModels.join(', ')})` : ''}`,
    'nothing was called (--dry-run)',
  ];
}
