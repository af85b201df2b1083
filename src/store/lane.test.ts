import { describe, expect, it } from 'vitest';
import { WorkLane } from './lane.js';

describe('WorkLane', () => {
  it('keeps at most `concurrency` tasks in flight and runs urgent tasks before waiting normal ones', async () => {
    const lane = new WorkLane(2);
    const release = new Map<string, () => void>();
    const started: string[] = [];
    let done = 0;
    const task = (name: string) => async () => {
      started.push(name);
      await new Promise<void>((resolve) => release.set(name, resolve));
      done += 1;
    };
    for (const name of ['a', 'b', 'c', 'd']) lane.add(task(name));
    lane.add(task('urgent'), true);
    expect(started).toEqual(['a', 'b']);
    expect(lane.running).toBe(2);
    expect(lane.waiting).toBe(3);
    release.get('a')!();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(started).toEqual(['a', 'b', 'urgent']);
    for (const name of ['b', 'urgent']) release.get(name)!();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(started).toEqual(['a', 'b', 'urgent', 'c', 'd']);
    for (const name of ['c', 'd']) release.get(name)!();
    await new Promise((resolve) => setTimeout(resolve, 0));
    expect(done).toBe(5);
    expect(lane.running + lane.waiting).toBe(0);
  });

  it('drains long queues in order', async () => {
    const lane = new WorkLane(3);
    const order: number[] = [];
    await new Promise<void>((resolve) => {
      for (let i = 0; i < 5000; i += 1) {
        lane.add(async () => {
          await Promise.resolve();
          order.push(i);
          if (order.length === 5000) resolve();
        });
      }
    });
    expect(order).toEqual(Array.from({ length: 5000 }, (_, i) => i));
  });

  it('rejects a bad concurrency', () => {
    expect(() => new WorkLane(0)).toThrow(/concurrency/);
  });
});
