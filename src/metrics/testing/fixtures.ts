import { expect } from 'vitest';
import { InvalidArgumentError } from '../../core/errors.js';

/** Runs `f`, expects it to throw an InvalidArgumentError, and returns the argument it names. */
export function argumentOf(f: () => unknown): string {
  try {
    f();
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidArgumentError);
    return (error as InvalidArgumentError).argument;
  }
  throw new Error('expected a throw');
}
