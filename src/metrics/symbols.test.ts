import { describe, expect, it } from 'vitest';
import { dtw } from './dtw.js';
import { editDistance } from './edit-distance.js';
import { jensenShannon } from './jensen-shannon.js';

// Runs first in its own file (fresh module state) so the symbol ids are predictable.
describe('symbol table reset after 65,536 distinct symbols', () => {
  it('re-interns remembered arrays after the table is cleared', () => {
    const x = ['p', 'q']; // ids p = 0, q = 1 in the fresh table
    const many = Array.from({ length: 70_000 }, (_, k) => `symbol-${k}`);
    expect(editDistance(x, many)).toBe(70_000);
    // The next call clears the table; `x` must not keep its stale ids [0, 1], which would
    // collide with the fresh ids q = 0, p = 1 and make the two sequences look identical.
    expect(editDistance(x, ['q', 'p'])).toBe(2);
    expect(dtw(x, ['q', 'p']).raw).toBe(2);
    expect(jensenShannon(x, ['q', 'q'])).toBeCloseTo(Math.sqrt((0.75 * Math.log(4 / 3)) / Math.LN2), 15);
    expect(jensenShannon(many, many.slice().reverse())).toBe(0);
  });
});
