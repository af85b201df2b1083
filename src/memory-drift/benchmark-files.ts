import { extname } from 'node:path';
import { hashBytes } from '../materials/files.js';
import { InputError } from '../core/errors.js';
import { matchTemplate, type StringPart } from '../materials/python-literal.js';
import { compileCurationMatcher, type CurationVerdict, curateQuestion, loadBuiltinCurationKeywords } from './curation.js';
import { type Question, type QuestionSet, questionIdFromText } from './questions.js';
import { MAX_DATA_FILE_BYTES, readUserFile, userFileReason } from '../core/user-files.js';

/**
 * The DriftLens authors' released question benchmark, read from local files (no network): the
 * Parquet or JSON files of their Hugging Face dataset, or the files their preparation script
 * writes. Rows come in two shapes, both handled:
 *
 * - flat rows with the question in a column (`raw_question`, `ori_question`, `question` or
 *   `text`, the first present, or the column named); their flat tables hold one row per
 *   (question, intervention), so questions are de-duplicated by text, first occurrence first;
 * - training records (`prompt`: a list of `{role, content}` messages) whose user message is the
 *   authors' step-format instruction around the question: the question is read back out of it
 *   with that template (the `instruction` option, from a DriftLens clone), and a persona string
 *   prepended to it (one of `interventions`) is removed.
 *
 * `curation` applies the keyword filters of App. A (Tables 7–8, data/memory-drift/
 * curation-keywords.json): `drop-list` removes questions with a drop-list hit; `keep-signals`
 * also removes questions without any keep signal. What was removed is returned, never silent.
 */

export type BenchmarkCuration = 'none' | 'drop-list' | 'keep-signals';

export interface BenchmarkFileOptions {
  file: string;
  column?: string;
  domainColumn?: string;
  /** Domain of every question when there is no domain column (default `benchmark`). */
  domain?: string;
  /** The authors' step-format instruction (a `question` field): reads training records. */
  instruction?: readonly StringPart[];
  /** Persona strings to strip from the front of a question read out of a training record. */
  interventions?: readonly string[];
  curation?: BenchmarkCuration;
}

export interface BenchmarkLoad {
  set: QuestionSet;
  rows: number;
  /** Rows whose question text repeated an earlier row's. */
  duplicates: number;
  /** Questions removed by the App. A filters, with the verdict and the phrases that decided it. */
  removed: Array<{ id: string; text: string; verdict: CurationVerdict; phrases: string[] }>;
}

const QUESTION_COLUMNS = ['raw_question', 'ori_question', 'question', 'text'];
const DOMAIN_COLUMNS = ['domain', 'source', 'category_domain'];

async function readRows(file: string): Promise<{ rows: Array<Record<string, unknown>>; sha256: string }> {
  const extension = extname(file).toLowerCase();
  let bytes: Buffer;
  try {
    bytes = readUserFile(file, { maxBytes: MAX_DATA_FILE_BYTES, what: 'a benchmark file' });
  } catch (error) {
    throw new InputError(`cannot read the benchmark file (${userFileReason(error)})`, { file });
  }
  const sha256 = hashBytes(bytes);
  if (extension === '.parquet') {
    try {
      // The whole file is in memory already: an ArrayBuffer is the AsyncBuffer hyparquet reads.
      const buffer = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
      // Loaded here: only a Parquet benchmark file needs the reader (reports and other commands never do).
      const { parquetReadObjects } = await import('hyparquet');
      const rows = (await parquetReadObjects({ file: buffer })) as Array<Record<string, unknown>>;
      return { rows, sha256 };
    } catch (error) {
      throw new InputError(`not a readable Parquet file (${(error as Error).message})`, { file });
    }
  }
  const text = bytes.toString('utf8');
  if (extension === '.jsonl' || extension === '.ndjson') {
    const rows: Array<Record<string, unknown>> = [];
    text.split(/\r?\n/u).forEach((line, i) => {
      if (line.trim() === '') return;
      rows.push(objectRow(parseJson(line, file, i + 1), file, i + 1));
    });
    return { rows, sha256 };
  }
  if (extension === '.json') {
    const value = parseJson(text, file);
    // A JSON array of rows, or the column-oriented `{ column: [values…] }` pandas writes with orient=list.
    const list = Array.isArray(value)
      ? value
      : ((value as { data?: unknown; rows?: unknown } | null)?.data ?? (value as { rows?: unknown } | null)?.rows ?? columnsToRows(value, file));
    if (!Array.isArray(list)) throw new InputError('expected a JSON array of rows', { file });
    return { rows: list.map((row, i) => objectRow(row, file, undefined, `${i}`)), sha256 };
  }
  throw new InputError(`unsupported benchmark file type "${extension}" (use .parquet, .json or .jsonl)`, { file });
}

function parseJson(text: string, file: string, line?: number): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw new InputError(`not valid JSON (${(error as Error).message})`, { file, ...(line ? { line } : {}) });
  }
}

function objectRow(value: unknown, file: string, line?: number, field?: string): Record<string, unknown> {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    throw new InputError('a row must be a JSON object', { file, ...(line ? { line } : {}), ...(field ? { field } : {}) });
  }
  return value as Record<string, unknown>;
}

function columnsToRows(value: unknown, file: string): unknown {
  if (value === null || typeof value !== 'object') return value;
  const columns = Object.entries(value as Record<string, unknown>);
  if (columns.length === 0 || !columns.every(([, v]) => Array.isArray(v))) return value;
  const n = (columns[0] as [string, unknown[]])[1].length;
  if (!columns.every(([, v]) => (v as unknown[]).length === n)) throw new InputError('the columns have different lengths', { file });
  return Array.from({ length: n }, (_, i) => Object.fromEntries(columns.map(([k, v]) => [k, (v as unknown[])[i]])));
}

/** The question of a training record: the user message read back through the authors' instruction. */
function questionOfRecord(row: Record<string, unknown>, options: BenchmarkFileOptions): string | null {
  const prompt = row.prompt;
  if (!Array.isArray(prompt) || options.instruction === undefined) return null;
  const user = prompt.find(
    (m): m is { role: string; content: string } => m !== null && typeof m === 'object' && m.role === 'user' && typeof m.content === 'string',
  );
  if (user === undefined) return null;
  const field = matchTemplate(options.instruction, user.content)?.question;
  if (field === undefined) return null;
  const prefix = [...(options.interventions ?? [])]
    .filter((s) => s !== '')
    .sort((a, b) => b.length - a.length)
    .find((s) => field.startsWith(s));
  return (prefix === undefined ? field : field.slice(prefix.length)).trim();
}

export async function loadBenchmarkFile(options: BenchmarkFileOptions): Promise<BenchmarkLoad> {
  const { file } = options;
  const { rows, sha256 } = await readRows(file);
  if (rows.length === 0) throw new InputError('the benchmark file has no rows', { file });
  const keys = new Set(rows.flatMap((row) => Object.keys(row)));
  const column = options.column ?? QUESTION_COLUMNS.find((c) => keys.has(c));
  if (options.column !== undefined && !keys.has(options.column)) {
    throw new InputError(`no column "${options.column}" (columns: ${[...keys].join(', ')})`, { file, field: 'column' });
  }
  if (column === undefined && !(keys.has('prompt') && options.instruction !== undefined)) {
    throw new InputError(
      `no question column (looked for ${QUESTION_COLUMNS.join(', ')}; columns: ${[...keys].join(', ')})` +
        (keys.has('prompt') ? '; training records with a `prompt` column need the DriftLens materials, whose instruction holds the question' : ''),
      { file, field: 'column' },
    );
  }
  const domainColumn = options.domainColumn ?? DOMAIN_COLUMNS.find((c) => keys.has(c));
  const matcher = compileCurationMatcher(loadBuiltinCurationKeywords());
  const curation = options.curation ?? 'none';
  const questions: Question[] = [];
  const seen = new Set<string>();
  const removed: BenchmarkLoad['removed'] = [];
  let duplicates = 0;
  rows.forEach((row, index) => {
    const raw = column !== undefined ? row[column] : questionOfRecord(row, options);
    if (typeof raw !== 'string' || raw.trim() === '') {
      throw new InputError(
        column !== undefined ? 'the question is missing or not a string' : 'the training record has no user message in the authors’ step format',
        {
          file,
          field: `${index}.${column ?? 'prompt'}`,
        },
      );
    }
    const text = raw.trim();
    if (seen.has(text)) {
      duplicates += 1;
      return;
    }
    seen.add(text);
    const id = questionIdFromText(text);
    if (curation !== 'none') {
      const verdict = curateQuestion(text, matcher);
      if (verdict.verdict === 'drop' || (curation === 'keep-signals' && verdict.verdict === 'review')) {
        removed.push({ id, text, verdict: verdict.verdict, phrases: (verdict.verdict === 'drop' ? verdict.drop : verdict.keep).map((h) => h.phrase) });
        return;
      }
    }
    const domainValue = domainColumn === undefined ? undefined : row[domainColumn];
    questions.push({ id, text, domain: typeof domainValue === 'string' && domainValue.trim() !== '' ? domainValue.trim() : (options.domain ?? 'benchmark') });
  });
  if (questions.length === 0) throw new InputError(`no question left after the App. A filters (${curation})`, { file, field: 'curation' });
  return { set: { source: file, version: null, sha256, questions }, rows: rows.length, duplicates, removed };
}
