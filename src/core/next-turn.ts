/**
 * A yield to the event loop that lets at most one waiter go on per turn of the loop.
 *
 * `await new Promise((r) => setImmediate(r))` resumes every job that yielded in the same check
 * phase: with k jobs cutting their work into slices (a reward server labelling k megabyte prompts),
 * one turn runs k slices before the loop polls for I/O again, and a `/health` request, which needs
 * two turns (accept, then read and answer), waits for 2k slices. Here the waiters queue up (first
 * in, first out) and each turn resumes one, so a turn holds one slice whatever the number of jobs;
 * between two slices the loop polls for I/O. The cost is a few microseconds of polling per slice.
 */
const waiting: (() => void)[] = [];
let scheduled = false;

function resumeOne(): void {
  const next = waiting.shift();
  // An immediate queued while immediates run waits for the next turn (after the poll for I/O).
  if (waiting.length > 0) setImmediate(resumeOne);
  else scheduled = false;
  next?.();
}

/** Resolves in a later turn of the event loop, after the waiters queued before it, one per turn. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setImmediate(resumeOne);
    }
  });
}
