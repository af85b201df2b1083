import type { EcholensError } from '../core/errors.js';

/**
 * Exit codes, the same for every command:
 * 0 ok · 1 a model call failed (after retries) or a gate check failed ·
 * 2 bad usage, configuration or input (nothing was run) · 3 interrupted or stopped by the budget
 * (finished cells are stored; the same command resumes) · 4 the run is still running in another
 * process (report, gate: try again when it has finished) · 70 an internal error (a bug).
 */
export const EXIT = { ok: 0, failed: 1, usage: 2, stopped: 3, running: 4, internal: 70 } as const;

/** The exit code of an expected error: a failed call is 1; everything else a user can fix first is 2. */
export function exitCodeOf(error: EcholensError): number {
  if (error.code === 'fatal_burst' || (error.code.startsWith('model_') && error.code !== 'model_auth' && error.code !== 'model_config')) {
    return EXIT.failed;
  }
  if (error.code === 'model_aborted') return EXIT.stopped;
  if (error.code === 'run_in_progress') return EXIT.running;
  return EXIT.usage;
}
