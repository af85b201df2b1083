import { isEcholensError } from './errors.js';

/**
 * A value or the reason it could not be computed. Every audit's report uses
 * it for estimates that may refuse (too few sessions, a singular fit, …):
 * the reason travels to the report instead of a NaN.
 */
export type Maybe<T> = T | { error: string };

/** True when a value is a refusal `{ error }` (and narrows it). */
export function isRefusal(value: unknown): value is { error: string } {
  return typeof value === 'object' && value !== null && 'error' in value;
}

/** What `compute` returns, or the refusal of the echolens error it throws (`reason` may add to its message); other errors propagate. */
export function attempt<T>(compute: () => T, reason: (message: string) => string = (message) => message): Maybe<T> {
  try {
    return compute();
  } catch (error) {
    if (isEcholensError(error)) return { error: reason(error.message) };
    throw error;
  }
}

/** True when a Maybe holds a value (and narrows it). */
export function isPresent<T>(value: Maybe<T>): value is T {
  return !isRefusal(value);
}

/** True when a Maybe (or null) holds a value. */
export function hasValue<T>(value: Maybe<T> | null | undefined): value is T {
  return value !== null && value !== undefined && isPresent(value);
}
