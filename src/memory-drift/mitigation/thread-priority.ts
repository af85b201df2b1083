/**
 * Scheduling priority of the reward server's helper threads (Linux only; elsewhere, or when not
 * permitted, nothing changes). `nice` is per thread on Linux, and a thread's id is the last part
 * of /proc/thread-self. The server's own thread (the one answering /health) keeps its priority;
 * the CPU-heavy threads (scoring workers, and the V8 threads that collect their garbage) are
 * lowered, so on a machine whose cores are all busy the server's thread is scheduled first.
 */
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { getPriority, setPriority } from 'node:os';

const STEP = 10;

function lower(tid: number): boolean {
  try {
    setPriority(tid, Math.min(19, getPriority(tid) + STEP));
    return true;
  } catch {
    return false;
  }
}

/** Lowers the calling thread's priority by 10 (a worker thread calls it on start). */
export function lowerThisThread(): boolean {
  try {
    const tid = Number(readlinkSync('/proc/thread-self').split('/').at(-1));
    return Number.isInteger(tid) && tid > 0 && lower(tid);
  } catch {
    return false;
  }
}

const lowered = new Set<number>();

/**
 * Lowers every other thread of this process that exists now, except the main thread (whose id
 * is the process id) and threads already lowered. Returns how many were lowered.
 */
export function lowerHelperThreads(): number {
  let tids: string[];
  try {
    tids = readdirSync('/proc/self/task');
  } catch {
    return 0;
  }
  let count = 0;
  for (const name of tids) {
    const tid = Number(name);
    if (!Number.isInteger(tid) || tid === process.pid || lowered.has(tid)) continue;
    lowered.add(tid);
    if (lower(tid)) count++;
  }
  return count;
}

/**
 * Time this thread has spent running and waiting for a core since it started, in ms (Linux
 * /proc/thread-self/schedstat); null elsewhere. A long event-loop delay with a large wait and
 * little running is the machine's scheduling, not work on the thread.
 */
export function threadSchedule(): { runMs: number; waitMs: number } | null {
  try {
    const [run, wait] = readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ');
    const runMs = Number(run) / 1e6;
    const waitMs = Number(wait) / 1e6;
    return Number.isFinite(runMs) && Number.isFinite(waitMs) ? { runMs, waitMs } : null;
  } catch {
    return null;
  }
}
