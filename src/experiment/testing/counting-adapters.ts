import { createAdapter } from '../../models/create-adapter.js';
import type { ModelAdapter } from '../../models/types.js';

/**
 * For resume tests: adapter factories that count every request sent (keyed by its JSON) in
 * `calls`, and abort `controller` once `stopAfter` requests have been sent in all, which stops
 * the run midway. A run that resumes without repeating a cell leaves every count at 1.
 */
export function countingAdapters(calls: Map<string, number>) {
  return (stopAfter: number, controller?: AbortController) =>
    (ref: string): ModelAdapter => {
      const inner = createAdapter(ref);
      return {
        ref: inner.ref,
        provider: inner.provider,
        modelId: inner.modelId,
        async generate(request, options) {
          const key = JSON.stringify(request);
          calls.set(key, (calls.get(key) ?? 0) + 1);
          if (controller && [...calls.values()].reduce((a, b) => a + b, 0) >= stopAfter) controller.abort();
          return inner.generate(request, options);
        },
      };
    };
}
