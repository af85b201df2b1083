import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { fakeResponse } from '../store/testing/fakes.js';
import { ModelCallError, type ModelErrorKind } from './errors.js';
import { CallFailedError, DEFAULT_RETRY_POLICY, type RetryEvent, backoffDelayMs, callWithRetry, resolveRetryPolicy } from './retry.js';
import { seededRandom } from '../core/random.js';
import { scriptedAdapter } from './testing/scripted-adapter.js';
import type { GenerateOptions, ModelAdapter, ModelRequest, ModelResponse } from './types.js';

const request: ModelRequest = { model: 'fake:m', messages: [{ role: 'user', content: 'hi' }], params: {}, sample: 0 };

function recordingSleep() {
  const waits: number[] = [];
  return { waits, sleep: async (ms: number) => void waits.push(ms) };
}

const err = (kind: ModelErrorKind, retryAfterMs?: number) => new ModelCallError(kind, `${kind} happened`, retryAfterMs === undefined ? {} : { retryAfterMs });

describe('callWithRetry', () => {
  it('honours Retry-After on 429 and 5xx exactly', async () => {
    const { adapter } = scriptedAdapter([err('rate_limit', 1500), err('server', 2500), fakeResponse('ok')]);
    const { waits, sleep } = recordingSleep();
    const result = await callWithRetry(adapter, request, { sleep });
    expect(result.response.text).toBe('ok');
    expect(result.attempts).toBe(3);
    expect(waits).toEqual([1500, 2500]);
  });

  it('caps an excessive Retry-After at maxRetryAfterMs', async () => {
    const { adapter } = scriptedAdapter([err('rate_limit', 10_000_000), fakeResponse('ok')]);
    const { waits, sleep } = recordingSleep();
    await callWithRetry(adapter, request, { sleep, policy: { maxRetryAfterMs: 90_000 } });
    expect(waits).toEqual([90_000]);
  });

  it('backs off exponentially up to the cap, then gives up with the last error', async () => {
    const { adapter, calls } = scriptedAdapter([err('server')]);
    const { waits, sleep } = recordingSleep();
    const failure = await callWithRetry(adapter, request, {
      sleep,
      policy: { jitter: 'none', baseDelayMs: 1000, maxDelayMs: 3000 },
    }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CallFailedError);
    expect((failure as CallFailedError).kind).toBe('server');
    expect((failure as CallFailedError).attempts).toBe(DEFAULT_RETRY_POLICY.maxAttempts);
    expect(calls()).toBe(6);
    expect(waits).toEqual([1000, 2000, 3000, 3000, 3000]);
  });

  it('applies full and partial jitter from the injected randomness', async () => {
    for (const [jitter, expected] of [
      ['full', [250, 500]],
      ['partial', [375, 750]],
    ] as const) {
      const { adapter } = scriptedAdapter([err('timeout'), err('connection'), fakeResponse('ok')]);
      const { waits, sleep } = recordingSleep();
      await callWithRetry(adapter, request, { sleep, random: () => 0.5, policy: { jitter, baseDelayMs: 500 } });
      expect(waits).toEqual(expected);
    }
  });

  it('retries malformed responses', async () => {
    const { adapter } = scriptedAdapter([err('malformed'), fakeResponse('ok')]);
    const { waits, sleep } = recordingSleep();
    const result = await callWithRetry(adapter, request, { sleep, random: () => 0 });
    expect(result.attempts).toBe(2);
    expect(waits).toEqual([]); // full jitter drew 0: no sleep at all
  });

  it.each(['auth', 'not_found', 'bad_request', 'config'] as const)('never retries %s', async (kind) => {
    const { adapter, calls } = scriptedAdapter([err(kind), fakeResponse('ok')]);
    const { waits, sleep } = recordingSleep();
    const failure = await callWithRetry(adapter, request, { sleep }).catch((error: unknown) => error);
    expect((failure as CallFailedError).kind).toBe(kind);
    expect((failure as CallFailedError).attempts).toBe(1);
    expect(calls()).toBe(1);
    expect(waits).toEqual([]);
  });

  it('re-asks empty output emptyRetries times, then throws empty with the last response and summed usage', async () => {
    const empty = fakeResponse('  \n', { inputTokens: 10, outputTokens: 1 });
    const { adapter, calls } = scriptedAdapter([empty]);
    const { waits, sleep } = recordingSleep();
    const failure = (await callWithRetry(adapter, request, { sleep }).catch((error: unknown) => error)) as CallFailedError;
    expect(failure.kind).toBe('empty');
    expect(failure.attempts).toBe(3);
    expect(calls()).toBe(3);
    expect(failure.lastResponse?.text).toBe('  \n');
    expect(failure.spentUsage.inputTokens).toBe(30);
    expect(waits).toEqual([]);
  });

  it('treats an adapter-thrown empty error like an empty response, and stops at emptyRetries 0', async () => {
    const first = scriptedAdapter([err('empty'), fakeResponse('ok')]);
    expect((await callWithRetry(first.adapter, request)).attempts).toBe(2);
    const second = scriptedAdapter([fakeResponse(''), fakeResponse('ok')]);
    const failure = await callWithRetry(second.adapter, request, { policy: { emptyRetries: 0 } }).catch((e: unknown) => e);
    expect((failure as CallFailedError).kind).toBe('empty');
    expect(second.calls()).toBe(1);
  });

  it('passes errors that are not ModelCallErrors through untouched (bugs are not retried)', async () => {
    const bug = new TypeError('boom');
    const { adapter, calls } = scriptedAdapter([bug]);
    await expect(callWithRetry(adapter, request)).rejects.toBe(bug);
    expect(calls()).toBe(1);
  });

  it('stops waiting when the signal aborts and reports aborted', async () => {
    const { adapter, calls } = scriptedAdapter([err('server'), fakeResponse('ok')]);
    const controller = new AbortController();
    const sleep = (_ms: number, signal?: AbortSignal) =>
      new Promise<void>((_resolve, reject) => {
        signal?.addEventListener('abort', () => reject(new Error('aborted')));
        controller.abort();
      });
    const failure = await callWithRetry(adapter, request, { sleep, signal: controller.signal }).catch((e: unknown) => e);
    expect((failure as CallFailedError).kind).toBe('aborted');
    expect(calls()).toBe(1);
  });

  it('calls onRetry with the failed attempt and the wait', async () => {
    const { adapter } = scriptedAdapter([err('rate_limit', 42), fakeResponse('ok')]);
    const events: Array<[number, string, number]> = [];
    await callWithRetry(adapter, request, {
      sleep: async () => {},
      onRetry: (event) => events.push([event.attempt, event.error.kind, event.delayMs]),
    });
    expect(events).toEqual([[1, 'rate_limit', 42]]);
  });
});

describe('retry policy helpers', () => {
  it('documents its defaults', () => {
    expect(DEFAULT_RETRY_POLICY).toMatchObject({ maxAttempts: 6, baseDelayMs: 1000, maxDelayMs: 60_000, emptyRetries: 2 });
  });

  it('rejects unusable policies with the field named', () => {
    expect(() => resolveRetryPolicy({ maxAttempts: 0 })).toThrow(InvalidArgumentError);
    expect(() => resolveRetryPolicy({ baseDelayMs: Number.NaN })).toThrow(/policy.baseDelayMs/);
    expect(() => resolveRetryPolicy({ jitter: 'some' as never })).toThrow(/policy.jitter/);
  });

  it('backoff grows by doubling to the cap', () => {
    const policy = resolveRetryPolicy({ jitter: 'none' });
    expect([1, 2, 3, 7, 8].map((n) => backoffDelayMs(policy, n, Math.random))).toEqual([1000, 2000, 4000, 60_000, 60_000]);
  });

  it('seededRandom is reproducible and uniform-ish in [0, 1)', () => {
    const a = seededRandom(7);
    const b = seededRandom(7);
    const xs = Array.from({ length: 1000 }, () => a());
    expect(xs.slice(0, 5)).toEqual(Array.from({ length: 5 }, () => b()));
    expect(Math.min(...xs)).toBeGreaterThanOrEqual(0);
    expect(Math.max(...xs)).toBeLessThan(1);
    const mean = xs.reduce((s, x) => s + x, 0) / xs.length;
    expect(Math.abs(mean - 0.5)).toBeLessThan(0.05);
  });
});

describe('callWithRetry streaming', () => {
  type Step = { deltas: string[]; outcome: ModelResponse | ModelCallError | Error };

  /** An adapter whose attempts stream the given deltas, then answer or fail; records what each call received. */
  function streaming(script: Step[]) {
    const received: GenerateOptions[] = [];
    let late: ((delta: string) => void) | undefined;
    const adapter: ModelAdapter = {
      ref: 'fake:m',
      provider: 'fake',
      modelId: 'm',
      async generate(_request, options = {}) {
        received.push(options);
        const step = script[Math.min(received.length - 1, script.length - 1)]!;
        for (const delta of step.deltas) options.onDelta?.(delta);
        late = options.onDelta;
        if (step.outcome instanceof Error) throw step.outcome;
        return step.outcome;
      },
    };
    return { adapter, received, lateDelta: (delta: string) => late?.(delta) };
  }

  it('passes onDelta to the adapter; the deltas concatenate to the response text', async () => {
    const { adapter, received } = streaming([{ deltas: ['Par', 'is', '.'], outcome: fakeResponse('Paris.') }]);
    const deltas: string[] = [];
    const retries: RetryEvent[] = [];
    const result = await callWithRetry(adapter, request, { onDelta: (d) => deltas.push(d), onRetry: (e) => retries.push(e) });
    expect(deltas).toEqual(['Par', 'is', '.']);
    expect(deltas.join('')).toBe(result.response.text);
    expect(typeof received[0]?.onDelta).toBe('function');
    expect(retries).toEqual([]);
  });

  it('reports the deltas a failed attempt had delivered before the retry restarts the answer', async () => {
    const { adapter } = streaming([
      { deltas: ['The ans', 'wer is'], outcome: err('connection') },
      { deltas: [], outcome: err('rate_limit', 5) },
      { deltas: ['Forty', '-two.'], outcome: fakeResponse('Forty-two.') },
    ]);
    const log: string[] = [];
    const result = await callWithRetry(adapter, request, {
      sleep: async () => {},
      random: () => 0,
      onDelta: (d) => log.push(`delta:${d}`),
      onRetry: (e) => log.push(`retry:${e.attempt}:${e.error.kind}:${e.deltasDiscarded}:${e.charsDiscarded}`),
    });
    expect(log).toEqual(['delta:The ans', 'delta:wer is', 'retry:1:connection:2:13', 'retry:2:rate_limit:0:0', 'delta:Forty', 'delta:-two.']);
    expect(result.response.text).toBe('Forty-two.');
    expect(result.attempts).toBe(3);
  });

  it('counts streamed whitespace of an empty answer as discarded', async () => {
    const { adapter } = streaming([
      { deltas: [' ', '\n'], outcome: fakeResponse(' \n') },
      { deltas: ['ok'], outcome: fakeResponse('ok') },
    ]);
    const events: RetryEvent[] = [];
    await callWithRetry(adapter, request, { onDelta: () => {}, onRetry: (e) => events.push(e) });
    expect(events.map((e) => [e.error.kind, e.deltasDiscarded, e.charsDiscarded])).toEqual([['empty', 2, 2]]);
  });

  it('drops a delta that arrives after its attempt settled', async () => {
    const { adapter, lateDelta } = streaming([
      { deltas: ['half'], outcome: err('server') },
      { deltas: ['whole'], outcome: fakeResponse('whole') },
    ]);
    const deltas: string[] = [];
    await callWithRetry(adapter, request, { sleep: async () => {}, onDelta: (d) => deltas.push(d) });
    lateDelta('stale');
    expect(deltas).toEqual(['half', 'whole']);
  });

  it('without onDelta the adapter gets no onDelta (the non-streaming path) and retries report zero deltas', async () => {
    const { adapter, received } = streaming([
      { deltas: [], outcome: err('server') },
      { deltas: [], outcome: fakeResponse('ok') },
    ]);
    const events: RetryEvent[] = [];
    await callWithRetry(adapter, request, { sleep: async () => {}, onRetry: (e) => events.push(e) });
    expect(received).toHaveLength(2);
    for (const options of received) expect('onDelta' in options).toBe(false);
    expect(events.map((e) => [e.deltasDiscarded, e.charsDiscarded])).toEqual([[0, 0]]);
  });

  it('an onDelta that throws stops the call untouched (a caller bug, not retried)', async () => {
    const { adapter, received } = streaming([{ deltas: ['x'], outcome: fakeResponse('x') }]);
    const bug = new RangeError('display broke');
    await expect(
      callWithRetry(adapter, request, {
        onDelta: () => {
          throw bug;
        },
      }),
    ).rejects.toBe(bug);
    expect(received).toHaveLength(1);
  });
});
