import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { copyDefined } from '../core/copy-defined.js';
import { InputError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { parseModelRef } from './ref.js';
import type { TokenUsage } from './types.js';
import { readUserText } from '../core/user-files.js';

/** USD per 1M tokens for one model of one provider. */
export interface ModelPrice {
  provider: string;
  model: string;
  input: number;
  output: number;
  /** Cache reads; defaults to `input` when the provider has no discount. */
  cachedInput?: number;
  /** Cache writes (Anthropic); defaults to `input`. */
  cacheWrite?: number;
  source?: string;
}

export interface PriceTable {
  checked?: string;
  note?: string;
  /** Providers with no per-token charge (simulations, replays, self-hosted servers). */
  freeProviders: string[];
  models: ModelPrice[];
}

const price = z.number().nonnegative();
const modelPriceSchema = z.strictObject({
  provider: z.string().min(1),
  model: z.string().min(1),
  input: price,
  output: price,
  // null (as JSON writes "no discount") reads as absent.
  cachedInput: price.nullish().transform((value) => value ?? undefined),
  cacheWrite: price.nullish().transform((value) => value ?? undefined),
  source: z.string().optional(),
});
const priceFileSchema = z.strictObject({
  currency: z.literal('USD').optional(),
  unit: z.literal('per 1M tokens').optional(),
  checked: z.string().optional(),
  note: z.string().optional(),
  freeProviders: z.union([z.array(z.string()), z.strictObject({ providers: z.array(z.string()), note: z.string().optional() })]).optional(),
  models: z.array(modelPriceSchema).optional(),
});

/**
 * Parses a price file (JSON or YAML; JSON is read as YAML). Pure. A malformed
 * file throws InputError naming the file, the line and the field.
 */
export function parsePriceTable(text: string, file: string): PriceTable {
  const lineCounter = new LineCounter();
  const doc = parseDocument(text, { lineCounter, prettyErrors: false });
  const syntax = doc.errors[0];
  if (syntax !== undefined) {
    const line = lineCounter.linePos(syntax.pos[0]).line;
    throw new InputError(`not valid JSON/YAML: ${syntax.message.split('\n')[0]}`, { file, line });
  }
  const result = priceFileSchema.safeParse(doc.toJS());
  if (!result.success) {
    const issue = result.error.issues[0]!;
    const path = issue.path.map((p) => (typeof p === 'symbol' ? String(p) : p));
    let line: number | undefined;
    for (let depth = path.length; depth >= 0 && line === undefined; depth--) {
      const node = depth === 0 ? doc.contents : doc.getIn(path.slice(0, depth), true);
      const range = (node as { range?: [number, number, number] } | null | undefined)?.range;
      if (range !== undefined) line = lineCounter.linePos(range[0]).line;
    }
    throw new InputError(issue.message, {
      file,
      ...(line === undefined ? {} : { line }),
      field: path.length === 0 ? '(top level)' : path.join('.'),
    });
  }
  const data = result.data;
  const freeProviders = Array.isArray(data.freeProviders) ? data.freeProviders : (data.freeProviders?.providers ?? []);
  const models: ModelPrice[] = (data.models ?? []).map((m) => {
    const out: ModelPrice = { provider: m.provider, model: m.model, input: m.input, output: m.output };
    copyDefined(out, m, ['cachedInput', 'cacheWrite', 'source']);
    return out;
  });
  const table: PriceTable = { freeProviders, models };
  copyDefined(table, data, ['checked', 'note']);
  return table;
}

/** Entries of `override` replace same provider+model entries of `base`; its free providers are added. */
export function mergePriceTables(base: PriceTable, override: PriceTable): PriceTable {
  const key = (p: ModelPrice) => `${p.provider}\u0000${p.model}`;
  const byKey = new Map(base.models.map((p) => [key(p), p]));
  for (const p of override.models) byKey.set(key(p), p);
  return {
    ...base,
    ...(override.checked === undefined ? {} : { checked: override.checked }),
    freeProviders: [...new Set([...base.freeProviders, ...override.freeProviders])],
    models: [...byKey.values()],
  };
}

let builtIn: PriceTable | undefined;

/** The price table shipped in `data/prices.json`. */
export function builtInPriceTable(): PriceTable {
  if (builtIn === undefined) {
    const file = join(packageRoot(), 'data', 'prices.json');
    builtIn = parsePriceTable(readFileSync(file, 'utf8'), file);
  }
  return builtIn;
}

/**
 * The built-in table, overridden by a user file (argument, else the
 * ECHOLENS_PRICES environment variable) when one is given.
 */
export function loadPriceTable(options: { file?: string; env?: Record<string, string | undefined> } = {}): PriceTable {
  const fromEnv = (options.env ?? process.env).ECHOLENS_PRICES;
  const file = options.file ?? (fromEnv?.trim() ? fromEnv : undefined);
  if (file === undefined) return builtInPriceTable();
  let text: string;
  try {
    text = readUserText(file);
  } catch (error) {
    const code = ((error instanceof InputError ? error.cause : error) as NodeJS.ErrnoException | undefined)?.code;
    // Not a regular file, or too large: the reader's own message says which.
    if (error instanceof InputError && code === undefined) throw error;
    throw new InputError(`cannot read the price file (${code ?? String(error)})`, { file });
  }
  return mergePriceTables(builtInPriceTable(), parsePriceTable(text, file));
}

const SNAPSHOT_SUFFIX = /-(\d{8}|\d{4}-\d{2}-\d{2}|latest)$/;

/**
 * The price entry for a model reference, or undefined when unknown. Dated
 * snapshots (`claude-sonnet-4-5-20250929`, `gpt-4.1-2025-04-14`) and `-latest`
 * aliases use the entry of their base name. Built-in prices live in `data/prices.json`
 * (Gemini API, Vertex AI and Bedrock rows added 2026-12-01 from the providers' pricing
 * pages named in each row's `source`).
 */
export function findPrice(model: string, prices: PriceTable): ModelPrice | undefined {
  const ref = parseModelRef(model);
  const candidates = prices.models.filter((p) => p.provider === ref.provider);
  const id = ref.provider === 'bedrock' ? ref.model.replace(BEDROCK_PROFILE_PREFIX, '') : ref.model;
  return (
    candidates.find((p) => p.model === ref.model) ??
    candidates.find((p) => p.model === id) ??
    candidates.find((p) => p.model === id.replace(SNAPSHOT_SUFFIX, ''))
  );
}

/**
 * Bedrock cross-region inference profiles (`us.anthropic.claude-…`, `global.…`) bill as the
 * model they route to; the price table names the base model id.
 */
const BEDROCK_PROFILE_PREFIX = /^(us|us-gov|eu|apac|jp|au|ca|global)\./;

export function isFreeProvider(model: string, prices: PriceTable): boolean {
  return prices.freeProviders.includes(parseModelRef(model).provider);
}

/**
 * Dollars for one call, or null when the model has no price (unknown is never 0).
 * `usage.inputTokens` is the whole prompt, cache reads and writes included;
 * `outputTokens` includes reasoning tokens (billed as output by every provider here).
 */
export function costOf(model: string, usage: TokenUsage, prices: PriceTable = builtInPriceTable()): number | null {
  if (isFreeProvider(model, prices)) return 0;
  const entry = findPrice(model, prices);
  if (entry === undefined) return null;
  const cached = Math.min(usage.cachedInputTokens, usage.inputTokens);
  const written = Math.min(usage.cacheWriteTokens, usage.inputTokens - cached);
  const plain = usage.inputTokens - cached - written;
  const dollars =
    plain * entry.input + cached * (entry.cachedInput ?? entry.input) + written * (entry.cacheWrite ?? entry.input) + usage.outputTokens * entry.output;
  return dollars / 1_000_000;
}
