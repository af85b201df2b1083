import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../models/types.js';
import { cacheablePrefix, estimateInputTokens, prefixSignature } from './schedule.js';
import { TokenBucket } from './token-bucket.js';

const long = (tag: string) => `${tag} `.repeat(2000);
const req = (prefix: string, question: string, model = 'm:x'): ModelRequest => ({
  model,
  messages: [
    { role: 'user', content: prefix },
    { role: 'assistant', content: 'ok' },
    { role: 'user', content: question },
  ],
  params: {},
  sample: 0,
});

describe('prefix scheduling', () => {
  it('uses the last cache breakpoint, else all messages but the last', () => {
    const messages = req('p', 'q').messages;
    expect(cacheablePrefix(messages)).toHaveLength(2);
    expect(cacheablePrefix([{ ...messages[0]!, cacheBreakpoint: true }, messages[1]!, messages[2]!])).toHaveLength(1);
  });

  it('ignores short prefixes and separates models', () => {
    expect(prefixSignature(req('short', 'q'))).toBeNull();
    expect(prefixSignature(req(long('a'), 'q1'))).toBe(prefixSignature(req(long('a'), 'q2')));
    expect(prefixSignature(req(long('a'), 'q1'))).not.toBe(prefixSignature(req(long('a'), 'q1', 'm:y')));
  });

  it('estimates input tokens at about four characters per token', () => {
    expect(estimateInputTokens(req('x'.repeat(400), 'y'.repeat(4)))).toBe(Math.ceil(406 / 4) + 12 + 3);
  });
});

describe('TokenBucket', () => {
  function fakeTime() {
    let t = 0;
    const sleeps: number[] = [];
    return {
      now: () => t,
      sleep: async (ms: number) => {
        sleeps.push(ms);
        t += ms;
      },
      sleeps,
      advance: (ms: number) => {
        t += ms;
      },
    };
  }

  it('lets a burst of `capacity` through, then paces at the rate', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket(60, { capacity: 3, now: time.now, sleep: time.sleep });
    const starts: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      await bucket.take(1);
      starts.push(time.now());
    }
    expect(starts).toEqual([0, 0, 0, 1000, 2000, 3000]);
  });

  it('serves concurrent takers in FIFO order', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket(120, { capacity: 1, now: time.now, sleep: time.sleep });
    const order: number[] = [];
    await Promise.all([0, 1, 2, 3].map((i) => bucket.take(1).then(() => order.push(i))));
    expect(order).toEqual([0, 1, 2, 3]);
    expect(time.now()).toBe(1500);
  });

  it('admits a take larger than capacity once full, then makes later takers pay the debt', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket(6000, { capacity: 1000, now: time.now, sleep: time.sleep });
    await bucket.take(3000);
    expect(time.now()).toBe(0);
    await bucket.take(1);
    // 2001 tokens of debt at 100 tokens/s.
    expect(time.now()).toBeGreaterThanOrEqual(20_010);
    expect(time.now()).toBeLessThanOrEqual(20_020);
  });

  it('refunds over-estimates and rejects a take when its signal aborts', async () => {
    const time = fakeTime();
    const bucket = new TokenBucket(60, { capacity: 10, now: time.now, sleep: time.sleep });
    await bucket.take(10);
    bucket.adjust(-4);
    expect(bucket.available()).toBe(4);
    const controller = new AbortController();
    controller.abort(new Error('stop'));
    await expect(bucket.take(5, controller.signal)).rejects.toThrow('stop');
    await bucket.take(4);
    expect(time.now()).toBe(0);
  });

  it('rejects unusable rates', () => {
    expect(() => new TokenBucket(0, { now: Date.now, sleep: async () => {} })).toThrow(/perMinute/);
  });
});
