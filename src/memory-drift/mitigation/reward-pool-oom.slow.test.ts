// The out-of-memory case of reward-pool.test.ts (a worker filled past its 64 MB heap: about 45 s
// under load), in the slow tier.
import { describe, expect, it } from 'vitest';
import { RewardWorkerPool } from './reward-pool.js';
import { BadRequest } from './reward-request.js';
import { PAPER_REWARD_WEIGHTS } from './reward.js';

const limits = { maxItems: 10, maxResponseChars: 400, maxSteps: 3, weights: PAPER_REWARD_WEIGHTS };
const bytes = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('reward worker pool', () => {
  it('fails a request whose worker runs out of memory with 503, and serves the next one', async () => {
    const small = new RewardWorkerPool(1, 64);
    try {
      // ~40 MB of responses: more than the worker's 64 MB heap holds once parsed and segmented.
      const big = bytes({ items: Array.from({ length: 10 }, (_, i) => ({ response: `${i} ${'A short sentence. '.repeat(220_000)}` })) });
      const error = await small.prepare('/score', big, { ...limits, maxResponseChars: 5_000_000, maxSteps: 10_000_000 }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(BadRequest);
      expect((error as BadRequest).status).toBe(503);
      expect((error as BadRequest).message).toMatch(/scoring worker failed/);
      const ok = await small.prepare('/score', bytes({ items: [{ response: 'Fine. Still here.' }] }), limits);
      expect(ok.items[0]!.steps).toEqual(['Fine.', 'Still here.']);
    } finally {
      await small.close();
    }
  }, 300_000);
});
