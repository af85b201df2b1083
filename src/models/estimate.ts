import { countTokens } from './token-count.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { messageDigest, requestKeys } from '../store/request-hash.js';
import { InvalidArgumentError } from '../core/errors.js';
import { cacheablePrefix, DEFAULT_PREFIX_MIN_CHARS } from '../store/schedule.js';
import type { CellSpec } from '../store/types.js';
import { BATCH_DISCOUNT } from './batch-prices.js';
import { anthropicCacheMinimumTokens } from './cache-minimum.js';
import { DEFAULT_MAX_TOKENS } from './defaults.js';
import { findPrice, isFreeProvider, type PriceTable } from './prices.js';
import { getProvider } from './providers.js';

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
 *   full price + max output (the naive figures).
 * - `expected`: input priced as the cache-aware scheduler is expected to be billed
 *   (docs/decisions.md#cost-estimates-and-caching): in each group of cells sharing
 *   a cacheable prefix, the first writes it (Anthropic: cache-write price; others:
 *   full price) and the rest read it at the cache-read price; plus expected output.
 *   `batchDollars` = batch and caching stacked, as `--batch` runs a stage (src/store/batch-runner.ts):
 *   OpenAI and Anthropic cells at half price (OpenAI Batch, Anthropic Message Batches), each
 *   group's first cell writing the cache in a first batch and the rest reading it in a second;
 *   Anthropic writes at the 1-hour lifetime's price (2× input, unless `batchCacheTtl` is 5m).
 *   OpenAI's extended retention (`prompt_cache_retention: "24h"`, which `--batch` sends where the
 *   model takes it) is billed as in-memory caching, so it changes no price here
 *   (docs/decisions.md#openai-cache-retention).
 *   Cells of other providers run online, so they count at their cached online figure.
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
  /** With prompt caching as scheduled, and with `--batch` (batch × cache), over the same priced cells. */
  expected?: { dollars: number; cachedInputTokens: number; cacheWriteTokens: number; batchDollars: number };
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
  /** Input tokens expected to be read from / written to the prompt cache. */
  cachedInputTokens: number;
  cacheWriteTokens: number;
  /** Expected dollars with caching (null without a price). */
  expectedDollars: number | null;
  /** Expected dollars with `--batch` and caching stacked (null without a price). */
  batchDollars: number | null;
}

export interface EstimateOptions {
  /** Typical answer length assumed for the expected figures (default 400 tokens). */
  expectedOutputTokens?: number;
  /** A cell's own typical answer length, where its format fixes it (a labeler's JSON); undefined = the default above. */
  expectedOutputOf?: (spec: CellSpec) => number | undefined;
  /** Anthropic cache lifetime a `--batch` run uses (default 1h, as the batch runner does unless the config sets one). */
  batchCacheTtl?: '5m' | '1h';
}

const PER_MESSAGE_TOKENS = 4;
const PER_REQUEST_TOKENS = 3;

export function estimateCells(specs: readonly CellSpec[], prices: PriceTable, options: EstimateOptions = {}): PlanEstimate {
  const expectedPerCell = options.expectedOutputTokens ?? 400;
  if (!Number.isFinite(expectedPerCell) || expectedPerCell < 0) {
    throw new InvalidArgumentError('expectedOutputTokens', `must be a non-negative number, got ${expectedPerCell}`);
  }
  // Plans repeat long prefixes across arms, probes and samples: tokenize each distinct text once.
  const tokenCache = new Map<string, number>();
  const tokens = (text: string): number => getOrInsert(tokenCache, text, () => countTokens(text));
  const seen = new Set<string>();
  const byModel = new Map<string, { cells: number; input: number; expected: number; max: number; cached: number; written: number }>();
  /** Prefix groups already warmed, per model (a group's first cell writes, the rest read). */
  const warmed = new Set<string>();
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
    const input = chatTokens(request.messages, tokens);
    const max = (request.params.maxTokens ?? DEFAULT_MAX_TOKENS) + (request.params.thinkingBudget ?? 0);
    const expected = Math.min(max, options.expectedOutputOf?.(spec) ?? expectedPerCell);
    const entry = getOrInsert(byModel, request.model, () => ({ cells: 0, input: 0, expected: 0, max: 0, cached: 0, written: 0 }));
    const prefix = cachedPrefixOf(request.model, request.messages, tokens);
    if (prefix !== null) {
      const group = `${request.model}\u0000${prefix.key}`;
      if (warmed.has(group)) entry.cached += prefix.tokens;
      else {
        warmed.add(group);
        if (prefix.writes) entry.written += prefix.tokens;
      }
    }
    entry.cells++;
    entry.input += input;
    entry.expected += expected;
    entry.max += max;
  }

  const perModel: ModelEstimate[] = [];
  const unpricedModels: string[] = [];
  let unpricedCells = 0;
  let low = 0;
  let high = 0;
  let expectedTotal = 0;
  let batchTotal = 0;
  for (const [model, t] of [...byModel.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    let dollars: ModelEstimate['dollars'];
    let expectedDollars: number | null = null;
    let batchDollars: number | null = null;
    if (isFreeProvider(model, prices)) {
      dollars = { low: 0, high: 0 };
      expectedDollars = 0;
      batchDollars = 0;
    } else {
      const price = findPrice(model, prices);
      dollars =
        price === undefined
          ? null
          : {
              low: (t.input * price.input + t.expected * price.output) / 1_000_000,
              high: (t.input * price.input + t.max * price.output) / 1_000_000,
            };
      if (price !== undefined) {
        const plain = t.input - t.cached - t.written;
        const withWrites = (writePrice: number) =>
          (plain * price.input + t.cached * (price.cachedInput ?? price.input) + t.written * writePrice + t.expected * price.output) / 1_000_000;
        expectedDollars = withWrites(price.cacheWrite ?? price.input);
        const kind = batchKindOf(model);
        // Anthropic's 1-hour cache writes cost twice the input price (5-minute ones: the table's cacheWrite).
        const batchWrite = kind === 'anthropic' && (options.batchCacheTtl ?? '1h') === '1h' ? 2 * price.input : (price.cacheWrite ?? price.input);
        batchDollars = kind === null ? expectedDollars : withWrites(batchWrite) * BATCH_DISCOUNT[kind];
      }
    }
    if (dollars === null) {
      unpricedModels.push(model);
      unpricedCells += t.cells;
    } else {
      low += dollars.low;
      high += dollars.high;
      expectedTotal += expectedDollars ?? 0;
      batchTotal += batchDollars ?? 0;
    }
    perModel.push({
      model,
      cells: t.cells,
      inputTokens: t.input,
      outputTokens: { expected: t.expected, max: t.max },
      dollars,
      cachedInputTokens: t.cached,
      cacheWriteTokens: t.written,
      expectedDollars,
      batchDollars,
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
    expected: {
      dollars: expectedTotal,
      cachedInputTokens: perModel.reduce((sum, m) => sum + m.cachedInputTokens, 0),
      cacheWriteTokens: perModel.reduce((sum, m) => sum + m.cacheWriteTokens, 0),
      batchDollars: batchTotal,
    },
    unpricedCells,
    unpricedModels,
    perModel,
  };
}

/** The batch API a model's cells go through with `--batch` (the provider's wire kind), or null: they run online. */
function batchKindOf(model: string): 'openai' | 'anthropic' | null {
  const colon = model.indexOf(':');
  const kind = colon > 0 ? getProvider(model.slice(0, colon))?.kind : undefined;
  return kind === 'openai' || kind === 'anthropic' ? kind : null;
}

/**
 * The part of a request the provider is expected to bill as cached once its group is
 * warm, or null: Anthropic caches up to the last breakpoint (or a system prompt that
 * passes the minimum, as the adapter marks it); OpenAI caches the scheduler's group
 * prefix automatically, in 128-token steps from 1,024 tokens; other providers are
 * priced without a cache discount (their price entry has none).
 */
function cachedPrefixOf(
  model: string,
  messages: readonly CellSpec['request']['messages'][number][],
  tokens: (text: string) => number,
): { key: string; tokens: number; writes: boolean } | null {
  const provider = model.slice(0, Math.max(0, model.indexOf(':')));
  const modelId = model.slice(provider.length + 1).split('@')[0]!;
  let prefix: readonly (typeof messages)[number][];
  if (provider === 'anthropic') {
    const minimum = anthropicCacheMinimumTokens(modelId);
    let end = -1;
    messages.forEach((message, index) => {
      if (message.cacheBreakpoint) end = index;
    });
    if (end < 0 && messages[0]?.role === 'system' && tokens(messages[0].content) >= minimum) end = 0;
    if (end < 0) return null;
    prefix = messages.slice(0, end + 1);
    const count = chatTokens(prefix, tokens);
    return count >= minimum ? { key: prefixKey(prefix), tokens: count, writes: true } : null;
  }
  prefix = cacheablePrefix(messages);
  let chars = 0;
  for (const message of prefix) chars += message.content.length;
  if (prefix.length === 0 || chars < DEFAULT_PREFIX_MIN_CHARS) return null;
  const count = chatTokens(prefix, tokens);
  if (count < 1024) return null;
  return { key: prefixKey(prefix), tokens: Math.floor(count / 128) * 128, writes: false };
}

/** The chat-format token count of messages (each one's text plus its overhead, plus the request's). */
function chatTokens(messages: readonly { content: string }[], tokens: (text: string) => number): number {
  let count = PER_REQUEST_TOKENS;
  for (const message of messages) count += PER_MESSAGE_TOKENS + tokens(message.content);
  return count;
}

/** Per-message digests are cached on the message objects, so a shared session prefix is hashed once. */
function prefixKey(prefix: readonly CellSpec['request']['messages'][number][]): string {
  return prefix.map((message) => `${message.role}:${messageDigest(message)}`).join('|');
}

/**
 * Margin `--max-cost` keeps over the expected figure before a run starts: caches can
 * miss (an evicted prefix, a call routed to another machine) and answers run long.
 */
export const EXPECTED_COST_MARGIN = 1.5;

/** The token and dollar lines every `--dry-run` prints under its plan line. */
export function estimateLines(e: PlanEstimate): string[] {
  // A model without a price makes the grid's cost unknown, never $0: the priced part is shown only beside it.
  const noPrice = e.unpricedModels.length > 0 ? `no price for: ${e.unpricedModels.join(', ')}` : '';
  const allUnpriced = e.unpricedModels.length > 0 && e.dollars.high === 0;
  const range = `$${e.dollars.low.toFixed(2)} – $${e.dollars.high.toFixed(2)}`;
  const lines = [
    `input tokens ≈ ${e.inputTokens.toLocaleString('en-US')}; output tokens expected ≈ ${e.outputTokens.expected.toLocaleString('en-US')}, at most ${e.outputTokens.max.toLocaleString('en-US')}`,
    allUnpriced
      ? `cost ≈ unknown (${noPrice}; \`--prices <file>\` adds one)`
      : noPrice
        ? `cost ≈ ${range} for the priced models + unknown (${noPrice}; \`--prices <file>\` adds one)`
        : `cost ≈ ${range}`,
  ];
  const x = e.expected;
  if (x !== undefined && !allUnpriced) {
    const cacheNote =
      x.cachedInputTokens + x.cacheWriteTokens > 0
        ? ` (${x.cachedInputTokens.toLocaleString('en-US')} input tokens read from the prompt cache, ${x.cacheWriteTokens.toLocaleString('en-US')} written)`
        : '';
    lines.push(
      `cost side by side${noPrice ? ' (priced models only)' : ''}: naive $${e.dollars.low.toFixed(2)} · expected with prompt caching $${x.dollars.toFixed(2)} · with --batch (batch × cache) $${x.batchDollars.toFixed(2)}${cacheNote}`,
    );
  }
  lines.push('nothing was called (--dry-run)');
  return lines;
}
