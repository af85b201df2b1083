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

  /** Reads one line's object (the reader's own format). */
  protected abstract record(lineNumber: number, value: Record<string, unknown>): void;
}
