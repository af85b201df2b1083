import { isUtf8 } from 'node:buffer';

/**
 * Splits a byte stream into lines without holding more than one line in memory.
 * Pure: bytes in, lines out through callbacks. Invalid UTF-8 is decoded lossily
 * (U+FFFD) and reported; a line longer than `maxLineBytes` is skipped and reported;
 * a last line without a newline is still delivered.
 */
export interface LineSink {
  line(lineNumber: number, text: string): void;
  warn(lineNumber: number, message: string): void;
}

export const DEFAULT_MAX_LINE_BYTES = 128 * 1024 * 1024;

export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private oversize = false;
  private lineNumber = 0;
  totalBytes = 0;

  constructor(
    private readonly sink: LineSink,
    private readonly maxLineBytes: number = DEFAULT_MAX_LINE_BYTES,
  ) {}

  get lines(): number {
    return this.lineNumber;
  }

  push(chunk: Uint8Array): void {
    const buf = Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    this.totalBytes += buf.length;
    let start = 0;
    for (;;) {
      const nl = buf.indexOf(10, start);
      if (nl === -1) break;
      this.finishLine(buf, start, nl);
      start = nl + 1;
    }
    if (start < buf.length) this.hold(buf.subarray(start));
  }

  end(): void {
    if (this.pendingBytes > 0 || this.oversize) this.finishLine(Buffer.alloc(0), 0, 0);
  }

  private hold(part: Buffer): void {
    if (this.oversize) return;
    if (this.pendingBytes + part.length > this.maxLineBytes) {
      this.oversize = true;
      this.pending = [];
      this.pendingBytes = 0;
      return;
    }
    // Copy: the caller may reuse its chunk buffer.
    this.pending.push(Buffer.from(part));
    this.pendingBytes += part.length;
  }

  private finishLine(buf: Buffer, start: number, end: number): void {
    this.lineNumber += 1;
    if (this.oversize || this.pendingBytes + (end - start) > this.maxLineBytes) {
      this.oversize = false;
      this.pending = [];
      this.pendingBytes = 0;
      this.sink.warn(this.lineNumber, `line longer than ${this.maxLineBytes} bytes skipped`);
      return;
    }
    let view: Buffer;
    if (this.pendingBytes === 0) {
      if (end > start && buf[end - 1] === 13) end -= 1;
      if (end === start) return;
      view = buf.subarray(start, end);
    } else {
      this.pending.push(buf.subarray(start, end));
      const bytes = Buffer.concat(this.pending);
      this.pending = [];
      this.pendingBytes = 0;
      let length = bytes.length;
      if (length > 0 && bytes[length - 1] === 13) length -= 1;
      if (length === 0) return;
      view = bytes.subarray(0, length);
    }
    // A UTF-8 byte-order mark opens the file, not the first record.
    if (this.lineNumber === 1 && view.length >= 3 && view[0] === 0xef && view[1] === 0xbb && view[2] === 0xbf) view = view.subarray(3);
    if (view.length === 0) return;
    if (!isUtf8(view)) this.sink.warn(this.lineNumber, 'invalid UTF-8 (decoded with replacement characters)');
    this.sink.line(this.lineNumber, view.toString('utf8'));
  }
}
