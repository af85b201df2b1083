import type { EventEmitter } from 'node:events';

export interface InterruptSignals {
  /** Aborted by the first SIGINT/SIGTERM: the runner starts no new cell and lets running calls finish. */
  signal: AbortSignal;
  /** Aborted by a second one: running requests are cancelled too (their cells stay pending). */
  hardSignal: AbortSignal;
  /** Removes the handlers (call when the run is over). */
  dispose(): void;
}

/**
 * Wires SIGINT and SIGTERM to the runner's two stop levels. `onSignal` lets the
 * CLI say what happens ("finishing 12 running calls; press Ctrl-C again to cancel them").
 */
export function interruptSignals(
  target: Pick<EventEmitter, 'on' | 'off'> = process,
  onSignal?: (name: string, level: 'graceful' | 'hard') => void,
): InterruptSignals {
  const graceful = new AbortController();
  const hard = new AbortController();
  const handler = (name: string) => {
    if (!graceful.signal.aborted) {
      graceful.abort(new Error(`${name}: stopping after running calls finish`));
      onSignal?.(name, 'graceful');
    } else if (!hard.signal.aborted) {
      hard.abort(new Error(`${name}: cancelling running calls`));
      onSignal?.(name, 'hard');
    }
  };
  const onInt = () => handler('SIGINT');
  const onTerm = () => handler('SIGTERM');
  target.on('SIGINT', onInt);
  target.on('SIGTERM', onTerm);
  return {
    signal: graceful.signal,
    hardSignal: hard.signal,
    dispose() {
      target.off('SIGINT', onInt);
      target.off('SIGTERM', onTerm);
    },
  };
}
