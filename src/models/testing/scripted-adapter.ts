import type { ModelAdapter, ModelResponse } from '../types.js';

/**
 * An adapter (`fake:m`) that plays a script: call n takes entry n (the last entry
 * repeats once the script runs out) and returns it, or throws it when it is an error.
 * `calls()` says how many calls were made.
 */
export function scriptedAdapter(script: Array<ModelResponse | Error>): { adapter: ModelAdapter; calls: () => number } {
  let calls = 0;
  const adapter: ModelAdapter = {
    ref: 'fake:m',
    provider: 'fake',
    modelId: 'm',
    async generate() {
      const step = script[Math.min(calls, script.length - 1)]!;
      calls += 1;
      if (step instanceof Error) throw step;
      return step;
    },
  };
  return { adapter, calls: () => calls };
}
