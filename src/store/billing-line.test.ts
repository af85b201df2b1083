import { describe, expect, it } from 'vitest';
import { billingLine } from './billing-line.js';

describe('billingLine', () => {
  it('states billed against naive and the cache reads', () => {
    expect(billingLine('targets', { spendUsd: 1.5, naiveUsd: 6, cacheReadCells: 23, done: 24, empty: 1 })).toBe(
      'targets: billed $1.5000 vs naive $6.0000 (0.250 of naive); prompt-cache reads in 23 of 25 answered cells',
    );
  });
  it('adds the followers’ cache reads of a --batch stage, and says when the cache was lost', () => {
    const batchCache = {
      expectedReads: 22,
      billedReads: 3,
      lost: true,
      leadersTurnaroundMs: 0,
      followersTurnaroundMs: 0,
      routes: { anthropic: 'batch' as const },
      rewarmCalls: 0,
      rewarmHits: 0,
      rewarmUsd: 0,
      rewarmSkipped: 0,
    };
    expect(billingLine('targets', { spendUsd: 3, naiveUsd: 6, cacheReadCells: 3, done: 24, empty: 0, batchCache })).toBe(
      'targets: billed $3.0000 vs naive $6.0000 (0.500 of naive); prompt-cache reads in 3 of 24 answered cells; followers read the cache in 3 of 22 expected (cache lost)',
    );
    expect(
      billingLine('targets', { spendUsd: 3, naiveUsd: 6, cacheReadCells: 22, done: 24, empty: 0, batchCache: { ...batchCache, billedReads: 22, lost: false } }),
    ).toMatch(/followers read the cache in 22 of 22 expected$/);
  });
  it('says nothing when nothing priced was called', () => {
    expect(billingLine('judges', { spendUsd: 0, naiveUsd: 0, cacheReadCells: 0, done: 4, empty: 0 })).toBeNull();
  });
});
