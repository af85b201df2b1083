import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { Option } from 'commander';
import { InvalidArgumentError } from '../core/errors.js';

/** Commander helpers shared by the commands. */

/** Accumulates a repeatable option (`--target a --target b`). */
export const collect = (value: string, previous: string[]): string[] => [...previous, value];

/** A parser of flag `name`'s number: `ok` accepts it, else the error says the value `must be …`. */
export function checkedNumber(name: string, ok: (n: number, value: string) => boolean, must: string): (value: string) => number {
  return (value: string) => {
    const n = Number(value);
    if (!ok(n, value)) throw new InvalidArgumentError(name, `must be ${must}, got "${value}"`);
    return n;
  };
}

/** Parses a positive number, naming the flag in the error. */
export const positiveNumber = (name: string) => checkedNumber(name, (n) => Number.isFinite(n) && n > 0, 'a positive number');

/** Parses a positive integer, naming the flag in the error. */
export const positiveInteger = (name: string) => checkedNumber(name, (n) => Number.isInteger(n) && n > 0, 'a positive integer');

/** Parses a number ≥ 0, naming the flag in the error. */
export const nonNegative = (name: string) => checkedNumber(name, (n) => Number.isFinite(n) && n >= 0, 'a non-negative number');

/** Parses an integer from `min` to `max`, naming the flag in the error. */
export const integerIn = (name: string, min: number, max: number) =>
  checkedNumber(name, (n) => Number.isInteger(n) && n >= min && n <= max, `an integer from ${min} to ${max}`);

/** Parses any finite number (not an empty string), naming the flag in the error. */
export const finiteNumber = (name: string) => checkedNumber(name, (n, value) => value.trim() !== '' && Number.isFinite(n), 'a number');

/**
 * A flag whose number value `parse` checks, made for the flag's own long name (`--port <n>` →
 * errors name `--port`), so that the name is written once.
 */
export function numberOption(flags: string, description: string, parse: (name: string) => (value: string) => number, defaultValue?: number): Option {
  const option = new Option(flags, description);
  return option.default(defaultValue).argParser(parse(option.long!));
}

/** Checks that a flag's value is one of two words (`--format md|json`), naming the flag in the error. */
export function oneOf<const T extends string>(name: string, allowed: readonly [T, T], value: string): T {
  if (!(allowed as readonly string[]).includes(value)) throw new InvalidArgumentError(name, `must be ${allowed[0]} or ${allowed[1]}, got "${value}"`);
  return value as T;
}

/** Writes to a file (creating its folder) or to stdout. */
export function emit(text: string, out?: string): void {
  if (out) {
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, text.endsWith('\n') ? text : `${text}\n`);
    process.stderr.write(`wrote ${out}\n`);
  } else {
    process.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }
}

/** `--materials`: `echolens`, or a clone path made absolute against the working folder (a config's own path is relative to the config). */
export function materialsFlag(value: string): string {
  return value === 'echolens' ? value : resolve(process.cwd(), value);
}

/** `--batch` and `--poll-interval`, shared by every command that runs cells. */
export const BATCH_FLAG_HELP =
  'submit OpenAI and Anthropic cells through their batch APIs (half price, results within 24 h; other providers run online); prefix groups keep their prompt cache across the queue (Anthropic 1-hour breakpoints, OpenAI prompt_cache_retention 24h where the model takes it; config limits.cacheTtl / limits.openaiCacheRetention); re-run the same command to collect after a stop';
export const POLL_INTERVAL_HELP = 'with --batch: seconds between status polls of open batch jobs (default 30)';
