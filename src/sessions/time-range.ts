/**
 * The earliest and latest of a transcript's timestamps (ISO strings compared as
 * strings, as everywhere else), fed with line bytes or with strings. Counting a large
 * file sees one timestamp per line: comparing bytes and decoding only the two kept at
 * the end avoids a string per line. Pure.
 */
export class TimeRange {
  private first = new Bound();
  private last = new Bound();

  seeBytes(bytes: Uint8Array, from: number, to: number): void {
    if (this.last.empty()) {
      this.first.set(bytes, from, to);
      this.last.set(bytes, from, to);
      return;
    }
    // Transcripts are written in time order: most timestamps are a new latest (and then cannot be a new earliest).
    if (compare(bytes, from, to, this.last) > 0) this.last.set(bytes, from, to);
    else if (compare(bytes, from, to, this.first) < 0) this.first.set(bytes, from, to);
  }

  seeString(timestamp: string): void {
    if (ASCII.test(timestamp)) {
      const bytes = Buffer.from(timestamp, 'latin1');
      this.seeBytes(bytes, 0, bytes.length);
      return;
    }
    // Kept as the string itself: it may hold what UTF-8 cannot (a lone surrogate from a \ud800 escape).
    if (this.first.empty() || timestamp < this.first.text()!) this.first.setString(timestamp);
    if (this.last.empty() || timestamp > this.last.text()!) this.last.setString(timestamp);
  }

  get earliest(): string | undefined {
    return this.first.text();
  }

  get latest(): string | undefined {
    return this.last.text();
  }
}

const ASCII = /^[\x00-\x7f]*$/;

/** A kept timestamp: its bytes, or (when it came as a non-ASCII string) the string. */
class Bound {
  bytes = Buffer.alloc(64);
  length = -1;
  string: string | undefined;

  empty(): boolean {
    return this.length < 0 && this.string === undefined;
  }

  set(bytes: Uint8Array, from: number, to: number): void {
    const length = to - from;
    if (length > this.bytes.length) this.bytes = Buffer.alloc(length);
    for (let k = 0; k < length; k += 1) this.bytes[k] = bytes[from + k]!;
    this.length = length;
    this.string = undefined;
  }

  setString(text: string): void {
    this.string = text;
    this.length = -1;
  }

  text(): string | undefined {
    if (this.string !== undefined) return this.string;
    return this.length < 0 ? undefined : this.bytes.toString('utf8', 0, this.length);
  }
}

/**
 * Sign of (bytes[from, to) as a string) compared with the bound, in JavaScript string
 * order (UTF-16 code units). Byte order is the same for ASCII; anything else is decoded.
 */
function compare(bytes: Uint8Array, from: number, to: number, bound: Bound): number {
  if (bound.string !== undefined) return slowCompare(bytes, from, to, bound);
  const length = to - from;
  const common = Math.min(length, bound.length);
  const kept = bound.bytes;
  for (let k = 0; k < common; k += 1) {
    const a = bytes[from + k]!;
    const b = kept[k]!;
    if (a >= 0x80 || b >= 0x80) return slowCompare(bytes, from, to, bound);
    if (a !== b) return a - b;
  }
  for (let k = common; k < length; k += 1) if (bytes[from + k]! >= 0x80) return slowCompare(bytes, from, to, bound);
  for (let k = common; k < bound.length; k += 1) if (kept[k]! >= 0x80) return slowCompare(bytes, from, to, bound);
  return length - bound.length;
}

function slowCompare(bytes: Uint8Array, from: number, to: number, bound: Bound): number {
  const a = Buffer.from(bytes.buffer, bytes.byteOffset + from, to - from).toString('utf8');
  const b = bound.text()!;
  return a < b ? -1 : a > b ? 1 : 0;
}
