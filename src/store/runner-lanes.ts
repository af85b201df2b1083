import type { SleepFn } from '../models/retry.js';
import type { ModelAdapter } from '../models/types.js';
import { WorkLane } from './lane.js';
import { concurrencyFor, providerOf } from './runner-options.js';
import type { AdapterFactory, RunCellsOptions } from './runner-types.js';
import { TokenBucket } from './token-bucket.js';

/** Per-provider work lanes (concurrency, request and token rates) and the adapters of one run. */

export interface ProviderLane {
  queue: WorkLane;
  requests?: TokenBucket;
  tokens?: TokenBucket;
}

/** One lane per provider, made when the provider's first cell is queued. */
export function providerLanes(
  options: Pick<RunCellsOptions, 'concurrency' | 'limits'>,
  clock: { now: () => number; sleep: SleepFn },
): (model: string) => ProviderLane {
  const lanes = new Map<string, ProviderLane>();
  return (model) => {
    const provider = providerOf(model);
    let lane = lanes.get(provider);
    if (!lane) {
      const limits = options.limits?.[provider] ?? options.limits?.['*'];
      lane = {
        queue: new WorkLane(concurrencyFor(options.concurrency, provider)),
        ...(limits?.requestsPerMinute ? { requests: new TokenBucket(limits.requestsPerMinute, clock) } : {}),
        ...(limits?.tokensPerMinute ? { tokens: new TokenBucket(limits.tokensPerMinute, clock) } : {}),
      };
      lanes.set(provider, lane);
    }
    return lane;
  };
}

/** One adapter per model ref, built once (a failed build fails every cell of that ref). */
export function adapterCache(adapterFor: AdapterFactory): (ref: string) => Promise<ModelAdapter> {
  const adapters = new Map<string, Promise<ModelAdapter>>();
  return (ref) => {
    let adapter = adapters.get(ref);
    if (!adapter) {
      adapter = Promise.resolve().then(() => adapterFor(ref));
      adapters.set(ref, adapter);
    }
    return adapter;
  };
}
