import { InvalidArgumentError } from '../core/errors.js';

/** A sequence of atomic symbols (ontology labels). Any string is a symbol. */
export type SymbolSequence = readonly string[];

export function describeValue(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'number' && Number.isNaN(value)) return 'NaN';
  return typeof value;
}

/** An array or a typed array (not a DataView): something a vector of numbers can be read from. */
export const isVector = (value: unknown): value is ArrayLike<number> => Array.isArray(value) || (ArrayBuffer.isView(value) && !(value instanceof DataView));

/** A value as an error message shows it: a number as itself, anything else by its kind. */
export const valueText = (value: unknown): string => (typeof value === 'number' ? String(value) : describeValue(value));

export function requireArray(value: unknown, argument: string): asserts value is readonly unknown[] {
  if (!Array.isArray(value)) {
    throw new InvalidArgumentError(argument, `expected an array, got ${describeValue(value)}`);
  }
}

export function requireString(value: unknown, argument: string): asserts value is string {
  if (typeof value !== 'string') {
    throw new InvalidArgumentError(argument, `expected a string, got ${describeValue(value)}`);
  }
}

export function requireFinite(value: unknown, argument: string): asserts value is number {
  if (typeof value !== 'number' || !Number.isFinite(value)) {
    throw new InvalidArgumentError(argument, `expected a finite number, got ${valueText(value)}`);
  }
}

/** alpha of eq. 16: a finite number in [0, 1]. */
export function requireUnitInterval(value: unknown, argument: string): asserts value is number {
  requireFinite(value, argument);
  if (value < 0 || value > 1) {
    throw new InvalidArgumentError(argument, `must lie in [0, 1], got ${value}`);
  }
}

/** Validates a symbol sequence: an array whose every element is a string. */
export function requireSymbols(value: unknown, argument: string): asserts value is SymbolSequence {
  requireArray(value, argument);
  for (let i = 0; i < value.length; i++) {
    const symbol: unknown = value[i];
    if (typeof symbol !== 'string') {
      throw new InvalidArgumentError(argument, `element ${i} must be a string symbol, got ${describeValue(symbol)}`);
    }
  }
}
