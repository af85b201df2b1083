import { z } from 'zod';
import { InputError, InvalidArgumentError } from '../core/errors.js';
import { type Question, type QuestionSet, userQuestion } from './questions.js';
import { parseInput } from './zod-input.js';

export const HF_DATASETS_SERVER_URL = 'https://datasets-server.huggingface.co';
/** The datasets-server /rows endpoint returns at most 100 rows per request. */
const MAX_PAGE = 100;

export interface HuggingFaceQuestionOptions {
  dataset: string;
  config?: string;
  split?: string;
  /** Column with the question text; default: the first of `question`, `text`, `prompt` that exists. */
  column?: string;
  idColumn?: string;
  domainColumn?: string;
  /** Domain for every row when there is no domain column. */
  domain?: string;
  /** Maximum number of rows to read (default: all). */
  limit?: number;
  /** Rows per request, 1–100 (default 100). */
  pageSize?: number;
  /** Injectable for tests and mirrors (default: the public datasets-server). */
  baseUrl?: string;
  /** Bearer token; default `env.HF_TOKEN`. Sent only as a header, never recorded. */
  token?: string;
  env?: Record<string, string | undefined>;
  fetch?: typeof fetch;
  signal?: AbortSignal;
}

const rowsPageSchema = z.object({
  features: z.array(z.object({ name: z.string() }).loose()).optional(),
  rows: z.array(
    z
      .object({
        row_idx: z.number().int(),
        row: z.record(z.string(), z.unknown()),
        truncated_cells: z.array(z.string()).optional(),
      })
      .loose(),
  ),
  num_rows_total: z.number().int().nonnegative(),
});

function cellText(value: unknown): string | null {
  if (typeof value === 'string') return value.trim();
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/**
 * Loads questions from a Hugging Face dataset through the datasets-server HTTP API
 * (`GET /rows?dataset=…&config=…&split=…&offset=…&length=…`), page by page.
 */
export async function loadHuggingFaceQuestions(options: HuggingFaceQuestionOptions): Promise<QuestionSet> {
  if (options.dataset.trim() === '') throw new InvalidArgumentError('dataset', 'must be a non-empty dataset name');
  const config = options.config ?? 'default';
  const split = options.split ?? 'train';
  const pageSize = options.pageSize ?? MAX_PAGE;
  if (!Number.isInteger(pageSize) || pageSize < 1 || pageSize > MAX_PAGE) {
    throw new InvalidArgumentError('pageSize', `must be an integer from 1 to ${MAX_PAGE}`);
  }
  if (options.limit !== undefined && (!Number.isInteger(options.limit) || options.limit < 1)) {
    throw new InvalidArgumentError('limit', 'must be a positive integer');
  }
  const base = (options.baseUrl ?? HF_DATASETS_SERVER_URL).replace(/\/+$/, '');
  const token = options.token ?? (options.env ?? process.env).HF_TOKEN;
  const doFetch = options.fetch ?? fetch;
  const where = `hf:${options.dataset} (config ${config}, split ${split})`;
  const headers: Record<string, string> = { accept: 'application/json' };
  if (token !== undefined && token !== '') headers.authorization = `Bearer ${token}`;

  const questions: Question[] = [];
  const seen = new Map<string, number>();
  let column = options.column;
  let offset = 0;
  let total = Number.POSITIVE_INFINITY;
  const wanted = options.limit ?? Number.POSITIVE_INFINITY;

  while (offset < total && questions.length < wanted) {
    const length = Math.min(pageSize, wanted - questions.length);
    const url = new URL(`${base}/rows`);
    for (const [key, value] of Object.entries({ dataset: options.dataset, config, split, offset, length })) url.searchParams.set(key, String(value));

    let response: Response;
    try {
      response = await doFetch(url, { headers, signal: options.signal });
    } catch (error) {
      throw new InputError(
        `cannot reach the datasets server at ${base} (${(error as Error).message})`,
        { file: where },
        {
          cause: error,
        },
      );
    }
    if (!response.ok) {
      const hint =
        response.status === 401 || response.status === 403
          ? 'the dataset may be gated or private: set HF_TOKEN'
          : response.status === 404
            ? 'check the dataset name, config and split'
            : undefined;
      const detail = (await response.text().catch(() => '')).slice(0, 200);
      throw new InputError(`datasets server answered HTTP ${response.status} at offset ${offset}${detail ? `: ${detail}` : ''}`, { file: where }, { hint });
    }
    let body: unknown;
    try {
      body = await response.json();
    } catch (error) {
      throw new InputError(`datasets server returned invalid JSON at offset ${offset}`, { file: where }, { cause: error });
    }
    const page = parseInput(rowsPageSchema, body, { file: where, root: 'response', prefix: 'unexpected /rows response: ', fallback: 'invalid' });
    total = page.num_rows_total;
    if (page.rows.length === 0) break;

    for (const entry of page.rows) {
      if (questions.length >= wanted) break;
      if (column === undefined) {
        column = ['question', 'text', 'prompt'].find((name) => name in entry.row);
        if (column === undefined) {
          throw new InputError(`no "question", "text" or "prompt" column (columns: ${Object.keys(entry.row).join(', ')}); pass a column`, {
            file: where,
            field: 'column',
          });
        }
      }
      const field = `rows[${entry.row_idx}].${column}`;
      if (!(column in entry.row)) throw new InputError(`column "${column}" not found`, { file: where, field });
      if (entry.truncated_cells?.includes(column)) {
        throw new InputError('the datasets server truncated this cell', { file: where, field });
      }
      const body = cellText(entry.row[column]);
      if (body === null || body === '') throw new InputError('empty or non-text question', { file: where, field });
      const id = options.idColumn === undefined ? null : cellText(entry.row[options.idColumn]);
      const domain = options.domainColumn === undefined ? (options.domain ?? 'unspecified') : cellText(entry.row[options.domainColumn]);
      const question = userQuestion(body, id, domain);
      const earlier = seen.get(question.id);
      if (earlier !== undefined) {
        throw new InputError(`duplicate question id "${question.id}" (first at row ${earlier})`, {
          file: where,
          field,
        });
      }
      seen.set(question.id, entry.row_idx);
      questions.push(question);
    }
    offset += page.rows.length;
  }
  if (questions.length === 0) throw new InputError('the dataset split has no rows', { file: where });
  return { source: where, version: null, sha256: null, questions };
}
