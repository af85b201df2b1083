import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { RewardWorkerPool } from './reward-pool.js';
import { BadRequest, prepareRequest } from './reward-request.js';
import { PAPER_REWARD_WEIGHTS } from './reward.js';

const limits = { maxItems: 10, maxResponseChars: 400, maxSteps: 3, weights: PAPER_REWARD_WEIGHTS };
const bytes = (value: unknown) => new TextEncoder().encode(typeof value === 'string' ? value : JSON.stringify(value));

describe('reward worker pool', () => {
  const pool = new RewardWorkerPool(2);
  afterAll(() => pool.close());

  it('prepares a request in a worker exactly as on this thread, with a key instead of the text', async () => {
    const body = {
      items: [
        { question_id: 'q1', response: 'First, we weigh the cost. Then we consider fairness.' },
        { question_id: 'q2', response: 'One. Two. Three. Four. Five.' },
        { question_id: 'q3', response: 'x'.repeat(401) },
        { question_id: 'q4', response: 'Ünïcode — a dash. And “quotes”.' },
      ],
    };
    const local = prepareRequest('/score', bytes(body), limits);
    const remote = await pool.prepare('/score', bytes(body), limits);
    expect(remote.single).toBe(false);
    expect(remote.items).toHaveLength(4);
    remote.items.forEach((item, i) => {
      const { response, ...rest } = local.items[i]!;
      expect(item).toEqual({ ...rest, key: `sha256:${createHash('sha256').update(response).digest('hex')}` });
    });
    // The cases the wire format distinguishes: steps, only their count (over maxSteps), none (over the length cap).
    expect(Array.isArray(remote.items[0]!.steps)).toBe(true);
    expect(remote.items[1]!.steps).toBe(5);
    expect(remote.items[2]).toMatchObject({ steps: null, text: null });
    expect(remote.items[3]!.steps).toEqual(local.items[3]!.steps);
  });

  it('refuses malformed bodies with the status the server answers', async () => {
    const refusal = (route: '/score' | '/verl' | '/openrlhf', body: Uint8Array) =>
      pool.prepare(route, body, limits).then(
        () => null,
        (error: unknown) => (error instanceof BadRequest ? [error.status, error.message] : error),
      );
    expect(await refusal('/score', bytes('{"items": ['))).toEqual([400, expect.stringMatching(/body is not JSON/)]);
    expect(await refusal('/score', bytes({ items: Array.from({ length: 11 }, () => ({ response: 'a' })) }))).toEqual([
      413,
      '11 items in one request; at most 10',
    ]);
    expect(await refusal('/verl', bytes({ batch: [{ solution_str: 1 }] }))).toEqual([400, 'item 0: "solution_str" must be a string']);
    expect(await refusal('/openrlhf', bytes({ query: ['a'], labels: [] }))).toEqual([400, expect.stringMatching(/"labels" must be an array of 1/)]);
    // The pool still works after refusals.
    expect((await pool.prepare('/verl', bytes({ solution_str: 'A step.', ground_truth: 'q1' }), limits)).single).toBe(true);
  });
});
