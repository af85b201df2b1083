import { readdirSync } from 'node:fs';
import { getPriority } from 'node:os';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { lowerHelperThreads, threadSchedule } from './thread-priority.js';

const linux = process.platform === 'linux';

describe.runIf(linux)('thread priority (Linux)', () => {
  it('reports how long this thread ran and waited for a core', () => {
    let x = 0;
    for (let i = 0; i < 2_000_000; i++) x += i;
    const schedule = threadSchedule();
    expect(x).toBeGreaterThan(0);
    expect(schedule?.runMs).toBeGreaterThan(0);
    expect(schedule?.waitMs).toBeGreaterThanOrEqual(0);
  });

  it('lowers every other thread of the process by 10, never the main thread, and each thread once', async () => {
    // A thread that exists before the call (a worker idling on a message port).
    const worker = new Worker('require("node:worker_threads").parentPort.once("message", () => {})', { eval: true });
    await new Promise((resolve) => worker.once('online', resolve));
    try {
      const tids = () => readdirSync('/proc/self/task').map(Number);
      const before = new Map(tids().map((tid) => [tid, getPriority(tid)]));
      const lowered = lowerHelperThreads();
      expect(lowered).toBeGreaterThan(0);
      expect(getPriority(process.pid)).toBe(before.get(process.pid));
      for (const tid of tids()) {
        if (tid === process.pid || !before.has(tid)) continue;
        expect(getPriority(tid)).toBe(Math.min(19, before.get(tid)! + 10));
      }
      // A second call leaves the threads already lowered as they are.
      lowerHelperThreads();
      for (const tid of tids()) if (tid !== process.pid && before.has(tid)) expect(getPriority(tid)).toBe(Math.min(19, before.get(tid)! + 10));
    } finally {
      worker.postMessage('stop');
      await worker.terminate();
    }
  });
});
