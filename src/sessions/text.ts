/**
 * Character helpers that count code points, as the reference (Python) does,
 * so a 30,000-character window means the same thing here and there.
 */

export function codePointLength(text: string): number {
  let n = 0;
  for (let i = 0; i < text.length; i += 1) {
    const c = text.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdbff && i + 1 < text.length) {
      const d = text.charCodeAt(i + 1);
      if (d >= 0xdc00 && d <= 0xdfff) i += 1;
    }
    n += 1;
  }
  return n;
}

/** The first `n` code points. */
export function headCodePoints(text: string, n: number): string {
  if (n >= text.length) return text;
  let count = 0;
  let i = 0;
  while (i < text.length && count < n) {
    const c = text.charCodeAt(i);
    i += c >= 0xd800 && c <= 0xdbff && i + 1 < text.length && isLow(text.charCodeAt(i + 1)) ? 2 : 1;
    count += 1;
  }
  return text.slice(0, i);
}

/** The last `n` code points. */
export function tailCodePoints(text: string, n: number): string {
  if (n <= 0) return '';
  if (n >= text.length) return text;
  let count = 0;
  let i = text.length;
  while (i > 0 && count < n) {
    const c = text.charCodeAt(i - 1);
    i -= isLow(c) && i - 2 >= 0 && isHigh(text.charCodeAt(i - 2)) ? 2 : 1;
    count += 1;
  }
  return text.slice(i);
}

function isHigh(c: number): boolean {
  return c >= 0xd800 && c <= 0xdbff;
}

function isLow(c: number): boolean {
  return c >= 0xdc00 && c <= 0xdfff;
}

/**
 * `json.dumps(value)` as Python writes it by default (", " and ": " separators,
 * non-ASCII escaped), so truncated tool payloads match the reference rendering.
 */
export function pythonJsonDumps(value: unknown): string {
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'string') return asciiEscape(JSON.stringify(value));
  if (typeof value === 'number') {
    if (Number.isNaN(value)) return 'NaN';
    if (!Number.isFinite(value)) return value > 0 ? 'Infinity' : '-Infinity';
    return JSON.stringify(value);
  }
  if (typeof value === 'boolean') return value ? 'true' : 'false';
  if (Array.isArray(value)) return `[${value.map(pythonJsonDumps).join(', ')}]`;
  if (typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).filter(([, v]) => v !== undefined);
    return `{${entries.map(([k, v]) => `${asciiEscape(JSON.stringify(k))}: ${pythonJsonDumps(v)}`).join(', ')}}`;
  }
  return 'null';
}

function asciiEscape(json: string): string {
  return json.replace(/[\u007f-\uffff]/g, (ch) => `\\u${ch.charCodeAt(0).toString(16).padStart(4, '0')}`);
}
