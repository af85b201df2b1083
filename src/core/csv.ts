import { InputError, InvalidArgumentError } from './errors.js';

/** One parsed CSV record with the 1-based line on which it starts. */
export interface CsvRecord {
  line: number;
  fields: string[];
}

/**
 * RFC 4180 CSV parser: quoted fields, doubled quotes, CR/LF/CRLF line ends,
 * newlines inside quoted fields. Blank lines are skipped. Errors name the line.
 */
export function parseCsv(text: string, file?: string): CsvRecord[] {
  const records: CsvRecord[] = [];
  let fields: string[] = [];
  let field = '';
  let line = 1;
  let recordLine = 1;
  let inQuotes = false;
  let quotedField = false;
  let quoteLine = 1;
  let i = text.charCodeAt(0) === 0xfeff ? 1 : 0;

  const endField = () => {
    fields.push(field);
    field = '';
    quotedField = false;
  };
  const endRecord = () => {
    endField();
    const blank = fields.length === 1 && fields[0] === '';
    if (!blank) records.push({ line: recordLine, fields });
    fields = [];
  };

  while (i < text.length) {
    const ch = text[i]!;
    if (inQuotes) {
      if (ch === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i += 2;
          continue;
        }
        inQuotes = false;
        i += 1;
        const next = text[i];
        if (next !== undefined && next !== ',' && next !== '\n' && next !== '\r') {
          throw new InputError(`unexpected character ${JSON.stringify(next)} after a closing quote`, {
            file,
            line,
          });
        }
        continue;
      }
      if (ch === '\n') line += 1;
      if (ch === '\r') {
        line += 1;
        if (text[i + 1] === '\n') {
          field += '\r\n';
          i += 2;
          continue;
        }
      }
      field += ch;
      i += 1;
      continue;
    }
    if (ch === '"') {
      if (field !== '' || quotedField) {
        throw new InputError('a quote inside an unquoted field (quote the whole field and double inner quotes)', {
          file,
          line,
        });
      }
      inQuotes = true;
      quotedField = true;
      quoteLine = line;
      i += 1;
      continue;
    }
    if (ch === ',') {
      endField();
      i += 1;
      continue;
    }
    if (ch === '\n' || ch === '\r') {
      endRecord();
      i += ch === '\r' && text[i + 1] === '\n' ? 2 : 1;
      line += 1;
      recordLine = line;
      continue;
    }
    field += ch;
    i += 1;
  }
  if (inQuotes) throw new InputError('unterminated quoted field', { file, line: quoteLine });
  if (field !== '' || fields.length > 0 || quotedField) endRecord();
  return records;
}

/** A CSV table: header names plus rows as objects keyed by header, each with its line. */
export interface CsvTable {
  header: string[];
  rows: { line: number; values: Record<string, string> }[];
}

/** Parses CSV with a header row; every row must have as many fields as the header. */
export function parseCsvTable(text: string, file?: string): CsvTable {
  const records = parseCsv(text, file);
  const first = records[0];
  if (first === undefined) throw new InputError('empty CSV (no header row)', { file, line: 1 });
  const header = first.fields.map((name) => name.trim());
  const seen = new Set<string>();
  for (const name of header) {
    if (name === '') throw new InputError('empty column name in the header', { file, line: first.line });
    if (seen.has(name)) throw new InputError(`duplicate column "${name}" in the header`, { file, line: first.line });
    seen.add(name);
  }
  const rows = records.slice(1).map((record) => {
    if (record.fields.length !== header.length) {
      throw new InputError(`expected ${header.length} fields (as in the header), found ${record.fields.length}`, {
        file,
        line: record.line,
      });
    }
    const values: Record<string, string> = {};
    header.forEach((name, index) => {
      values[name] = record.fields[index]!;
    });
    return { line: record.line, values };
  });
  return { header, rows };
}

/** One CSV field: quoted when it holds a quote, comma or line end, or starts or ends with white space. */
export function quoteCsvField(value: string): string {
  return /[",\r\n]/.test(value) || /^\s|\s$/.test(value) ? `"${value.replaceAll('"', '""')}"` : value;
}

/**
 * A report cell: empty for null, undefined and non-finite numbers; a text that a
 * spreadsheet would run as a formula (leading `=`, `+`, `-`, `@`, tab, CR) gets a
 * leading `'` (model output and labels are untrusted); then quoted as needed.
 */
export function csvCell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'number') return csvNumber(value);
  const text = String(value);
  return quoteCsvField(/^[=+\-@\t\r]/u.test(text) ? `'${text}` : text);
}

/**
 * A number for a CSV cell: integers (counts) exactly, other values to 6 significant digits —
 * far below any estimate's standard error, and free of float noise like 0.30000000000000004.
 * Non-finite values are empty cells.
 */
export function csvNumber(value: number): string {
  if (!Number.isFinite(value)) return '';
  if (Number.isInteger(value)) return String(value);
  return String(Number(value.toPrecision(6)));
}

/** Serializes rows as CSV (CRLF line ends, RFC 4180 quoting). */
export function toCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  const lines = [header.map(quoteCsvField).join(',')];
  for (const row of rows) {
    if (row.length !== header.length) {
      throw new InvalidArgumentError('rows', `a row has ${row.length} fields, the header has ${header.length}`);
    }
    lines.push(row.map((value) => quoteCsvField(value === null ? '' : String(value))).join(','));
  }
  return lines.join('\r\n') + '\r\n';
}
