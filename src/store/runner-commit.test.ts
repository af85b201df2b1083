import { describe, expect, it } from 'vitest';
import { ZERO_USAGE } from '../models/types.js';
import type { CellOutcome } from './run-store-common.js';
import { attemptRecorder, batchedCommitter } from './runner-commit.js';
import { testOutcome } from './testing/fakes.js';

const turn = () => new Promise((resolve) => setImmediate(resolve));

const outcome = (text: string): CellOutcome => testOutcome({ text, usage: ZERO_USAGE, latencyMs: 1, costUsd: 0 });

/** A writer whose writes finish only when the test says so. */
function heldWriter() {
  const writes: Array<{ keys: string[]; finish: () => void }> = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const write = (items: ReadonlyArray<{ key: string }>) =>
    new Promise<boolean[]>((resolve) => {
      inFlight += 1;
      maxInFlight = Math.max(maxInFlight, inFlight);
      writes.push({
        keys: items.map((item) => item.key),
        finish: () => {
          inFlight -= 1;
          resolve(items.map(() => true));
        },
      });
    });
  return { write, writes, maxInFlight: () => maxInFlight };
}

describe('group commit', () => {
  it('without a limit writes each turn of the event loop at once', async () => {
    const writer = heldWriter();
    const commit = batchedCommitter<{ key: string; outcome: CellOutcome }>(writer.write);
    const done: Array<Promise<unknown>> = [];
    for (let turnIndex = 0; turnIndex < 4; turnIndex += 1) {
      done.push(commit({ key: `a${turnIndex}`, outcome: outcome('x') }), commit({ key: `b${turnIndex}`, outcome: outcome('y') }));
      await turn();
    }
    expect(writer.writes.map((w) => w.keys)).toEqual([
      ['a0', 'b0'],
      ['a1', 'b1'],
      ['a2', 'b2'],
      ['a3', 'b3'],
    ]);
    for (const w of writer.writes) w.finish();
    expect((await Promise.all(done)).length).toBe(8);
  });

  it('with maxInFlight, items arriving while the writes allowed are on their way join one next write', async () => {
    const writer = heldWriter();
    const commit = batchedCommitter<{ key: string; outcome: CellOutcome }>(writer.write, { maxInFlight: 2 });
    const done: Array<Promise<{ written: boolean; outcome: CellOutcome }>> = [];
    for (let turnIndex = 0; turnIndex < 5; turnIndex += 1) {
      done.push(commit({ key: `c${turnIndex}`, outcome: outcome(`t${turnIndex}`) }));
      await turn();
    }
    // Two writes on their way; the three later items wait together.
    expect(writer.writes.map((w) => w.keys)).toEqual([['c0'], ['c1']]);
    writer.writes[0]!.finish();
    await turn();
    await turn();
    expect(writer.writes.map((w) => w.keys)).toEqual([['c0'], ['c1'], ['c2', 'c3', 'c4']]);
    writer.writes[1]!.finish();
    writer.writes[2]!.finish();
    const committed = await Promise.all(done);
    expect(committed.map((c) => [c.written, c.outcome.text])).toEqual([0, 1, 2, 3, 4].map((i) => [true, `t${i}`]));
    expect(writer.maxInFlight()).toBe(2);
  });

  it('counts attempts the same way: at most maxInFlight statements, later keys merged', async () => {
    const batches: string[][] = [];
    const finishes: Array<() => void> = [];
    const record = attemptRecorder(
      (keys) =>
        new Promise<void>((resolve) => {
          batches.push([...keys]);
          finishes.push(resolve);
        }),
      { maxInFlight: 1 },
    );
    const done = [record('k0')];
    await turn();
    done.push(record('k1'), record('k2'));
    await turn();
    done.push(record('k3'));
    await turn();
    expect(batches).toEqual([['k0']]);
    finishes[0]!();
    await turn();
    await turn();
    expect(batches).toEqual([['k0'], ['k1', 'k2', 'k3']]);
    finishes[1]!();
    await Promise.all(done);
  });
});
