import { extname } from 'node:path';
import { z } from 'zod';
import { sha256Hex } from '../core/canonical-json.js';
import { InputError } from '../core/errors.js';
import { parseCsvTable } from '../core/csv.js';
import { readBuiltinDataFile, readDataFile } from './data-files.js';
import { parseInput } from './zod-input.js';

/** An open-ended question (DriftLens §2.1). */
export interface Question {
  id: string;
  domain: string;
  subdomain?: string;
  text: string;
}

/** A loaded question set and where it came from (recorded in run manifests). */
export interface QuestionSet {
  source: string;
  version: string | null;
  sha256: string | null;
  questions: Question[];
}

const nonEmpty = z.string().trim().min(1, 'must be a non-empty string');

/** Schema of one line of the built-in questions.jsonl. */
export const builtinQuestionSchema = z.strictObject({
  id: nonEmpty.regex(/^[A-Za-z0-9._:-]+$/, 'only letters, digits and . _ : - are allowed'),
  domain: nonEmpty,
  subdomain: nonEmpty,
  text: nonEmpty,
});

/** Schema of one line of a user JSONL file: `text` or `question`, optional id/domain/subdomain. */
const userQuestionSchema = z.looseObject({
  id: z.union([nonEmpty, z.number().int()]).optional(),
  domain: nonEmpty.optional(),
  subdomain: nonEmpty.optional(),
  text: nonEmpty.optional(),
  question: nonEmpty.optional(),
});

/** Stable id for a question without one: derived from its text, so reordering rows keeps ids. */
export function questionIdFromText(text: string): string {
  return `q-${sha256Hex(text.trim()).slice(0, 12)}`;
}

/** A question from a user's row: an empty or absent id is derived from the text, an empty or absent domain is `unspecified`. */
export function userQuestion(text: string, id?: string | null, domain?: string | null, subdomain?: string | null): Question {
  const question: Question = { id: id || questionIdFromText(text), domain: domain || 'unspecified', text };
  if (subdomain) question.subdomain = subdomain;
  return question;
}

function addUnique(questions: Question[], seen: Map<string, number>, question: Question, file: string, line: number) {
  const earlier = seen.get(question.id);
  if (earlier !== undefined) {
    throw new InputError(`duplicate question id "${question.id}" (first on line ${earlier})`, {
      file,
      line,
      field: 'id',
    });
  }
  seen.set(question.id, line);
  questions.push(question);
}

function parseJsonLine(raw: string, file: string, line: number): unknown {
  try {
    return JSON.parse(raw);
  } catch (error) {
    throw new InputError(`not valid JSON (${(error as Error).message})`, { file, line, field: 'json' });
  }
}

/** One JSONL line's value checked against a schema; the first issue becomes an InputError at that line. */
function parseLineValue<S extends z.ZodType>(schema: S, value: unknown, file: string, line: number): z.output<S> {
  return parseInput(schema, value, { file, line, root: '(line)', fallback: 'invalid value' });
}

/** The questions of a JSONL text: each non-empty line's JSON value made a question by `toQuestion`; ids unique; at least one. */
function parseJsonlQuestions(text: string, file: string, toQuestion: (value: unknown, line: number) => Question): Question[] {
  const questions: Question[] = [];
  const seen = new Map<string, number>();
  text.split(/\r?\n/).forEach((raw, index) => {
    const line = index + 1;
    if (raw.trim() === '') return;
    addUnique(questions, seen, toQuestion(parseJsonLine(raw, file, line), line), file, line);
  });
  if (questions.length === 0) throw new InputError('no questions', { file });
  return questions;
}

/** Parses the built-in strict format: every line `{ id, domain, subdomain, text }`. */
export function parseBuiltinQuestionsJsonl(text: string, file = 'questions.jsonl'): Question[] {
  return parseJsonlQuestions(text, file, (value, line) => parseLineValue(builtinQuestionSchema, value, file, line));
}

/** Parses a user JSONL file: one object per line with `text` (or `question`), optional `id`, `domain`, `subdomain`. */
export function parseQuestionsJsonl(text: string, file = '<jsonl>'): Question[] {
  return parseJsonlQuestions(text, file, (value, line) => {
    if (value === null || typeof value !== 'object' || Array.isArray(value)) {
      throw new InputError('expected a JSON object', { file, line, field: '(line)' });
    }
    const data = parseLineValue(userQuestionSchema, value, file, line);
    const body = data.text ?? data.question;
    if (body === undefined) throw new InputError('missing "text" (or "question")', { file, line, field: 'text' });
    return userQuestion(body, data.id === undefined ? undefined : String(data.id), data.domain, data.subdomain);
  });
}

/** Parses a user CSV with a header row: a `question` or `text` column, optional `id`, `domain`, `subdomain`. */
export function parseQuestionsCsv(text: string, file = '<csv>'): Question[] {
  const table = parseCsvTable(text, file);
  const textColumn = table.header.includes('question') ? 'question' : table.header.includes('text') ? 'text' : null;
  if (textColumn === null) {
    throw new InputError(`no "question" or "text" column (columns: ${table.header.join(', ')})`, {
      file,
      line: 1,
      field: 'header',
    });
  }
  const questions: Question[] = [];
  const seen = new Map<string, number>();
  for (const row of table.rows) {
    const body = row.values[textColumn]!.trim();
    if (body === '') throw new InputError('empty question', { file, line: row.line, field: textColumn });
    const question = userQuestion(body, row.values.id?.trim(), row.values.domain?.trim(), row.values.subdomain?.trim());
    addUnique(questions, seen, question, file, row.line);
  }
  if (questions.length === 0) throw new InputError('no questions (only a header row)', { file });
  return questions;
}

/** Loads a user's question file; the format comes from the extension (.csv, .jsonl, .json lines). */
export function loadQuestionsFile(path: string): QuestionSet {
  const data = readDataFile(path);
  const extension = extname(path).toLowerCase();
  let questions: Question[];
  if (extension === '.csv') questions = parseQuestionsCsv(data.text, path);
  else if (extension === '.jsonl' || extension === '.ndjson') questions = parseQuestionsJsonl(data.text, path);
  else {
    throw new InputError(`unsupported question file type "${extension}" (use .csv or .jsonl)`, { file: path });
  }
  return { source: path, version: null, sha256: data.sha256, questions };
}

/** Loads the built-in question set (data/memory-drift/questions.jsonl) with its version. */
export function loadBuiltinQuestions(): QuestionSet {
  const data = readBuiltinDataFile('questions');
  return {
    source: 'builtin:questions',
    version: data.version,
    sha256: data.sha256,
    questions: parseBuiltinQuestionsJsonl(data.text, data.file),
  };
}
