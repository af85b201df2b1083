import { isObject } from '../core/guards.js';
import type { LineSink } from './line-splitter.js';
import type { SessionWarning } from './types.js';

/**
 * What the transcript readers share: each line is one JSON object, handed to `record`. A line
 * that is not valid JSON or not an object, or whose record cannot be read, becomes a warning
 * naming the file and line and is skipped: a malformed line never stops the read.
 */
export abstract class JsonRecordParser implements LineSink {
  readonly warnings: SessionWarning[] = [];
  /** Unknown record kinds: how many lines, and the first one (warned once there). */
  private readonly unknown = new Map<string, { count: number; line: number }>();

  constructor(readonly file: string) {}

  warn(line: number, message: string): void {
    this.warnings.push({ file: this.file, line, message });
  }

  line(lineNumber: number, text: string): void {
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch (error) {
      this.warn(lineNumber, `invalid JSON skipped (${(error as Error).message.slice(0, 120)})`);
      return;
    }
    if (!isObject(value)) {
      this.warn(lineNumber, 'line is not a JSON object; skipped');
      return;
    }
    try {
      this.record(lineNumber, value);
    } catch (error) {
      // Defensive: a record of an unexpected shape must never stop the read.
      this.warn(lineNumber, `record skipped (${(error as Error).message.slice(0, 120)})`);
    }
  }

  /** An unknown record kind (e.g. `record type "x"`): warned at its first line, counted after. */
  protected noteUnknown(line: number, what: string): void {
    const seen = this.unknown.get(what);
    if (seen) seen.count += 1;
    else {
      this.warn(line, `unknown ${what} skipped`);
      this.unknown.set(what, { count: 1, line });
    }
  }

  /** One closing warning per unknown kind seen on more than one line. */
  protected warnRepeatedUnknowns(): void {
    for (const [what, { count, line }] of this.unknown) {
      if (count > 1) this.warn(line, `unknown ${what}: ${count} lines skipped in all (first here)`);
    }
  }

  /** Reads one line's object (the reader's own format). */
  protected abstract record(lineNumber: number, value: Record<string, unknown>): void;
}
