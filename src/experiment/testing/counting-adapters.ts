import { expect } from 'vitest';
import { createAdapter } from '../../models/create-adapter.js';
import type { ModelAdapter } from '../../models/types.js';
import type { StageRuntime } from '../runtime.js';

/**
 * Adapter factories that count every request sent (keyed by its JSON) in `calls`, and abort
 * `controller` once `stopAfter` requests have been sent in all, which stops the run midway.
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

/**
 * The resume test every audit makes: runs it once per entry of `stops` (at concurrency 2),
 * stopped after that many requests in all, then once to the end. Checks that each stopped run
 * is interrupted, that every later run resumes the first one's run id, that the last one
 * finishes, and that no request was sent twice. Returns the runs in order and the request counts.
 */
export async function runStoppedAndResumed<R extends { runId: string; resumed: boolean; interrupted: boolean }>(
  run: (runtime: StageRuntime) => Promise<R>,
  stops: readonly number[],
): Promise<{ runs: R[]; calls: ReadonlyMap<string, number> }> {
  const calls = new Map<string, number>();
  const counting = countingAdapters(calls);
  const runs: R[] = [];
  for (const stopAfter of stops) {
    const controller = new AbortController();
    const stopped = await run({ concurrency: 2, signal: controller.signal, adapterFor: counting(stopAfter, controller) });
    expect(stopped.interrupted).toBe(true);
    runs.push(stopped);
  }
  const finished = await run({ signal: new AbortController().signal, adapterFor: counting(Number.POSITIVE_INFINITY) });
  expect(finished.interrupted).toBe(false);
  runs.push(finished);
  for (const later of runs.slice(1)) {
    expect(later.runId).toBe(runs[0]!.runId);
    expect(later.resumed).toBe(true);
  }
  expect([...calls.values()].every((n) => n === 1)).toBe(true);
  return { runs, calls };
}
