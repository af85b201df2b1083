import { describe, expect, it } from 'vitest';
import { billingLine } from './billing-line.js';

describe('billingLine', () => {
  it('states billed against naive and the cache reads', () => {
    expect(billingLine('targets', { spendUsd: 1.5, naiveUsd: 6, cacheReadCells: 23, done: 24, empty: 1 })).toBe(
      'targets: billed $1.5000 vs naive $6.0000 (0.250 of naive); prompt-cache reads in 23 of 25 answered cells',
    );
  });
  it('says nothing when nothing priced was called', () => {
    expect(billingLine('judges', { spendUsd: 0, naiveUsd: 0, cacheReadCells: 0, done: 4, empty: 0 })).toBeNull();
  });
});
