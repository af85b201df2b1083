import { getOrInsert } from '../core/get-or-insert.js';
import type { SleepFn } from '../models/retry.js';
import type { ModelAdapter } from '../models/types.js';
import { providerOf } from './runner-options.js';
import type { AdapterFactory, RunCellsOptions } from './runner-types.js';
import { TokenBucket } from './token-bucket.js';

/**
 * Per-provider rate buckets (requests and tokens per minute) and the adapters of one run.
 * Concurrency per provider is the execution engine's slots (src/execution/engine.ts).
 */

export interface ProviderLane {
  requests?: TokenBucket;
  tokens?: TokenBucket;
}

/** One lane per provider, made when the provider's first cell asks for it. */
export function providerLanes(options: Pick<RunCellsOptions, 'limits'>, clock: { now: () => number; sleep: SleepFn }): (model: string) => ProviderLane {
  const lanes = new Map<string, ProviderLane>();
  return (model) => {
    const provider = providerOf(model);
    const limits = options.limits?.[provider] ?? options.limits?.['*'];
    return getOrInsert(lanes, provider, () => ({
      ...(limits?.requestsPerMinute ? { requests: new TokenBucket(limits.requestsPerMinute, clock) } : {}),
      ...(limits?.tokensPerMinute ? { tokens: new TokenBucket(limits.tokensPerMinute, clock) } : {}),
    }));
  };
}

/** One adapter per model ref, built once (a failed build fails every cell of that ref). */
export function adapterCache(adapterFor: AdapterFactory): (ref: string) => Promise<ModelAdapter> {
  const adapters = new Map<string, Promise<ModelAdapter>>();
  return (ref) => getOrInsert(adapters, ref, () => Promise.resolve().then(() => adapterFor(ref)));
}
