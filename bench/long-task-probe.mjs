/**
 * Preloaded into the reward server by bench/reward-health.bench.ts (BENCH_LONG_TASKS=file): a 5 ms
 * timer on the server's thread that records every turn of its event loop that came more than
 * 20 ms late, as one JSON line in the file: when (monotonic clock, µs, the clock of `--cpu-prof`
 * profiles), how late (ms), and how much of that the thread ran and how much it waited for a core
 * (Linux /proc/thread-self/schedstat). A late turn the thread mostly ran is a long task of this
 * thread's own; one it mostly waited is the machine's. tools/cpu-long-tasks.mjs lists the
 * profile's functions in each.
 */
import { appendFileSync, readFileSync } from 'node:fs';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import { isMainThread } from 'node:worker_threads';

const file = process.env.ECHOLENS_LONG_TASK_FILE;
const TICK_MS = 5;
const LATE_MS = 20;
const schedstat = () => {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ').map(Number);
    return { run: run / 1e6, wait: wait / 1e6 };
  } catch {
    return { run: Number.NaN, wait: Number.NaN };
  }
};
// Workers inherit the preload; their long tasks are theirs to have (they do the parsing and scoring).
if (file && isMainThread) {
  let last = process.hrtime.bigint();
  let lastSched = schedstat();
  setInterval(() => {
    const now = process.hrtime.bigint();
    const sched = schedstat();
    const lateMs = Number(now - last) / 1e6 - TICK_MS;
    if (lateMs > LATE_MS) {
      const line = {
        startUs: Number(last / 1000n),
        endUs: Number(now / 1000n),
        lateMs: Math.round(lateMs * 10) / 10,
        ranMs: Math.round((sched.run - lastSched.run) * 10) / 10,
        waitedMs: Math.round((sched.wait - lastSched.wait) * 10) / 10,
      };
      appendFileSync(file, `${JSON.stringify(line)}\n`);
    }
    last = now;
    lastSched = sched;
  }, TICK_MS).unref();
  // Garbage-collection pauses of this thread over 5 ms, by kind, as lines of their own.
  const kinds = {
    [constants.NODE_PERFORMANCE_GC_MAJOR]: 'major',
    [constants.NODE_PERFORMANCE_GC_MINOR]: 'minor',
    [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental',
    [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weakcb',
  };
  const origin = process.hrtime.bigint() - BigInt(Math.round(performance.now() * 1e6));
  new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) {
      if (entry.duration <= 5) continue;
      const startUs = Number((origin + BigInt(Math.round(entry.startTime * 1e6))) / 1000n);
      appendFileSync(
        file,
        `${JSON.stringify({ gc: kinds[entry.detail?.kind] ?? String(entry.detail?.kind), startUs, ms: Math.round(entry.duration * 10) / 10 })}\n`,
      );
    }
  }).observe({ entryTypes: ['gc'] });
}
