import { describe, expect, it } from 'vitest';
import { nextTurn } from './next-turn.js';

describe('nextTurn', () => {
  it('resumes its waiters first in, first out, one per turn of the event loop', async () => {
    // Counts turns: an immediate that queues itself runs once per turn.
    let turns = 0;
    let counting = true;
    const tick = () => {
      turns++;
      if (counting) setImmediate(tick);
    };
    setImmediate(tick);
    const resumed: { job: number; turn: number }[] = [];
    await Promise.all(
      [0, 1, 2, 3].map(async (job) => {
        await nextTurn();
        resumed.push({ job, turn: turns });
      }),
    );
    counting = false;
    expect(resumed.map((r) => r.job)).toEqual([0, 1, 2, 3]);
    // With setImmediate all four would resume in the same turn.
    const seen = resumed.map((r) => r.turn);
    expect(new Set(seen).size).toBe(4);
  });

  it('never resolves in the same turn', async () => {
    let resumed = false;
    const waiting = nextTurn().then(() => {
      resumed = true;
    });
    await Promise.resolve();
    expect(resumed).toBe(false);
    await waiting;
    expect(resumed).toBe(true);
  });
});
