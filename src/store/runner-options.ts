import { ConfigError, InvalidArgumentError } from '../core/errors.js';
import { type ModelRequest, ZERO_USAGE } from '../models/types.js';
import type { AdapterFactory, CostFn, RunCellsOptions } from './runner-types.js';

/** Option checks, per-provider settings and the lazily loaded defaults of `runCells`. */

export const DEFAULT_CONCURRENCY = 8;

/** The provider part of a model ref (`openai:gpt-4.1` → `openai`). */
export function providerOf(model: string): string {
  const colon = model.indexOf(':');
  return colon > 0 ? model.slice(0, colon) : model;
}

export function concurrencyFor(concurrency: RunCellsOptions['concurrency'], provider: string): number {
  if (concurrency === undefined) return DEFAULT_CONCURRENCY;
  if (typeof concurrency === 'number') return concurrency;
  return concurrency[provider] ?? concurrency['*'] ?? DEFAULT_CONCURRENCY;
}

export function validateOptions(options: RunCellsOptions): void {
  const positiveInt = (name: string, value: unknown) => {
    if (!Number.isInteger(value) || (value as number) < 1) {
      throw new InvalidArgumentError(name, `must be an integer ≥ 1, got ${String(value)}`);
    }
  };
  if (typeof options.concurrency === 'number') positiveInt('concurrency', options.concurrency);
  else if (options.concurrency) {
    for (const [name, value] of Object.entries(options.concurrency)) positiveInt(`concurrency.${name}`, value);
  }
  if (options.fatalBurst !== undefined) positiveInt('fatalBurst', options.fatalBurst);
  if (options.assumedMaxOutputTokens !== undefined) positiveInt('assumedMaxOutputTokens', options.assumedMaxOutputTokens);
  if (options.maxCostUsd !== undefined && (!Number.isFinite(options.maxCostUsd) || options.maxCostUsd < 0)) {
    throw new InvalidArgumentError('maxCostUsd', `must be a finite number ≥ 0, got ${options.maxCostUsd}`);
  }
  for (const [provider, limits] of Object.entries(options.limits ?? {})) {
    for (const field of ['requestsPerMinute', 'tokensPerMinute'] as const) {
      const value = limits[field];
      if (value !== undefined && (!Number.isFinite(value) || value <= 0)) {
        throw new InvalidArgumentError(`limits.${provider}.${field}`, `must be a positive number, got ${value}`);
      }
    }
  }
  if (options.schedule !== undefined && options.schedule !== 'prefix' && options.schedule !== 'plan' && options.schedule !== 'prefix-fifo') {
    throw new InvalidArgumentError('schedule', `must be prefix, plan or prefix-fifo, got ${String(options.schedule)}`);
  }
}

/** With a budget, every model about to be called needs a known price, or the budget means nothing. */
export function checkPricesKnown(requests: readonly ModelRequest[], toRun: readonly number[], costOf: CostFn | undefined): void {
  const models = new Set(toRun.map((index) => requests[index]!.model));
  for (const model of models) {
    const probe = costOf?.(model, { ...ZERO_USAGE, inputTokens: 1_000_000, outputTokens: 1_000_000 });
    if (probe === undefined || probe === null || !Number.isFinite(probe)) {
      throw new ConfigError(
        `no price is known for ${model}, so --max-cost cannot be enforced`,
        { field: 'maxCostUsd' },
        {
          hint: 'add a price for the model or run without --max-cost',
        },
      );
    }
  }
}

// Adapters and prices live in src/models; load them only when a run needs them, so
// the store does not pull every provider SDK in at import time.
export const defaultAdapterFactory: AdapterFactory = async (ref) => {
  const models = await import('../models/index.js');
  return models.createAdapter(ref);
};

export async function defaultCostOf(): Promise<CostFn> {
  const models = await import('../models/index.js');
  const unparseable = new Set<string>();
  return (model, usage) => {
    if (unparseable.has(model)) return null;
    try {
      return models.costOf(model, usage);
    } catch {
      // A ref the price table cannot parse has no known price; remember it, throwing is slow.
      unparseable.add(model);
      return null;
    }
  };
}
