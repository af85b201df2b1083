import { fixed, percent, pValue, share, signed } from '../format.js';
import type { DocumentBlock, DocumentCell, NumberFormat, RichText } from './types.js';

/**
 * Table cells as text, the same in every format (report/format.ts), and short constructors the
 * audits' document builders use. A missing number is `—`.
 */

export const MISSING = '—';

export function formatNumber(x: number | null, format: NumberFormat, digits?: number): string {
  switch (format) {
    case 'signed':
      return signed(x, digits ?? 2, MISSING);
    case 'fixed':
      return fixed(x, digits ?? 3, MISSING);
    case 'percent':
      return percent(x, digits ?? 1, MISSING);
    case 'share':
      return share(x, digits ?? 1, MISSING);
    case 'integer':
      return x === null || !Number.isFinite(x) ? MISSING : String(x);
  }
}

/** An interval's end: unbounded ends (a test inverted where it cannot reject) read ±∞. */
const intervalEnd = (x: number | null, format: NumberFormat, digits?: number): string =>
  x === Number.POSITIVE_INFINITY ? '+∞' : x === Number.NEGATIVE_INFINITY ? '−∞' : formatNumber(x, format, digits);

/** A cell's text (without Markdown or HTML escaping). */
export function cellText(cell: DocumentCell): string {
  switch (cell.kind) {
    case 'text':
      return cell.text;
    case 'number':
      return formatNumber(cell.value, cell.format, cell.digits) + (cell.suffix ?? '');
    case 'p':
      return pValue(cell.value, MISSING) + (cell.suffix ?? '');
    case 'interval': {
      const est = cell.estimate === null ? '' : formatNumber(cell.estimate, cell.format, cell.digits);
      const ci = cell.interval
        ? `[${intervalEnd(cell.interval[0], cell.format, cell.digits)}, ${intervalEnd(cell.interval[1], cell.format, cell.digits)}]`
        : '';
      return [est, ci].filter((s) => s.length > 0).join(' ') + (cell.estimate === null && !cell.interval ? MISSING : '') + (cell.suffix ?? '');
    }
  }
}

export const text = (t: string, options: { code?: boolean; mark?: boolean } = {}): DocumentCell => ({ kind: 'text', text: t, ...options });
export const num = (value: number | null | undefined, format: NumberFormat, digits?: number, suffix?: string): DocumentCell => ({
  kind: 'number',
  value: value ?? null,
  format,
  ...(digits === undefined ? {} : { digits }),
  ...(suffix === undefined ? {} : { suffix }),
});
export const int = (value: number | null | undefined): DocumentCell => num(value, 'integer');
export const pCell = (value: number | null | undefined, suffix?: string): DocumentCell => ({
  kind: 'p',
  value: value ?? null,
  ...(suffix === undefined ? {} : { suffix }),
});
export const intervalCell = (
  estimate: number | null | undefined,
  interval: readonly [number, number] | null | undefined,
  format: NumberFormat,
  digits?: number,
  suffix?: string,
): DocumentCell => ({
  kind: 'interval',
  estimate: estimate ?? null,
  interval: interval ? [interval[0], interval[1]] : null,
  format,
  ...(digits === undefined ? {} : { digits }),
  ...(suffix === undefined ? {} : { suffix }),
});

/** A paragraph block; `quote`: set apart (a Markdown block quote). */
export const para = (text: RichText, quote = false): DocumentBlock => (quote ? { kind: 'text', quote, text } : { kind: 'text', text });

/** A table whose columns are `headers`; those at the `numeric` indexes hold numbers (right-aligned). */
export const table = (headers: readonly string[], rows: DocumentCell[][], numeric: readonly number[] = []): DocumentBlock => ({
  kind: 'table',
  columns: headers.map((header, i) => (numeric.includes(i) ? { header, numeric: true } : { header })),
  rows,
});

/** A caption line and its table, or nothing when `show` is false. */
export const captioned = (
  show: boolean,
  caption: string,
  headers: readonly string[],
  rows: DocumentCell[][],
  numeric: readonly number[] = [],
): DocumentBlock[] => (show ? [{ kind: 'text', text: caption }, table(headers, rows, numeric)] : []);
