import { mkdtempSync, writeFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { InputError, InvalidArgumentError } from '../core/errors.js';
import { parseCsv, parseCsvTable, toCsv } from '../core/csv.js';
import { loadHuggingFaceQuestions } from './hf-datasets.js';
import { loadQuestionsFile, parseBuiltinQuestionsJsonl, parseQuestionsCsv, parseQuestionsJsonl, questionIdFromText } from './questions.js';

function thrown(fn: () => unknown): InputError {
  try {
    fn();
  } catch (error) {
    if (error instanceof InputError) return error;
    throw error;
  }
  throw new Error('expected an InputError');
}

describe('CSV', () => {
  it('parses quoted fields with commas, doubled quotes, CRLF and newlines inside quotes, and reports start lines', () => {
    const text = 'a,b\r\n"x, y","he said ""hi"""\r\n"multi\nline",z\n\nlast,""\n';
    expect(parseCsv(text)).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['x, y', 'he said "hi"'] },
      { line: 3, fields: ['multi\nline', 'z'] },
      { line: 6, fields: ['last', ''] },
    ]);
    expect(parseCsv('\ufeffa,b\n1,2')).toEqual([
      { line: 1, fields: ['a', 'b'] },
      { line: 2, fields: ['1', '2'] },
    ]);
  });

  it('round-trips through toCsv', () => {
    const rows = [
      ['1', 'Should I, or not?', ''],
      ['2', 'She said "no"\nthen left', ' padded '],
    ];
    const table = parseCsvTable(toCsv(['id', 'question', 'note'], rows));
    expect(table.rows.map((r) => [r.values.id, r.values.question, r.values.note])).toEqual(rows);
  });

  it('names the line of an unterminated quote, a stray quote and a wrong field count', () => {
    expect(thrown(() => parseCsv('a,b\n1,"open\n2,3\n', 'f.csv')).message).toBe('f.csv:2: unterminated quoted field');
    expect(thrown(() => parseCsv('a,b\n1,x"y\n', 'f.csv')).line).toBe(2);
    expect(thrown(() => parseCsv('a\n"ok"x\n', 'f.csv')).message).toMatch(/^f\.csv:2: unexpected character/);
    const wrong = thrown(() => parseCsvTable('a,b\n1,2\n3\n', 'f.csv'));
    expect(wrong.line).toBe(3);
    expect(wrong.message).toMatch(/expected 2 fields/);
  });

  it('rejects duplicate and empty header names', () => {
    expect(thrown(() => parseCsvTable('a,a\n1,2\n')).message).toMatch(/duplicate column "a"/);
    expect(thrown(() => parseCsvTable('a,\n1,2\n')).message).toMatch(/empty column name/);
  });

  it('toCsv rejects a row of the wrong width with a typed error', () => {
    expect(() => toCsv(['a', 'b'], [['1']])).toThrow(InvalidArgumentError);
  });
});

describe('user question files', () => {
  it('reads a CSV with a question column, optional id and domain, and stable text-derived ids', () => {
    const csv = 'question,domain\n"Should I, honestly, say no?",ethics\nIs it worth it?,\n';
    const questions = parseQuestionsCsv(csv, 'q.csv');
    expect(questions).toEqual([
      { id: questionIdFromText('Should I, honestly, say no?'), domain: 'ethics', text: 'Should I, honestly, say no?' },
      { id: questionIdFromText('Is it worth it?'), domain: 'unspecified', text: 'Is it worth it?' },
    ]);
    expect(questions[0]!.id).toMatch(/^q-[0-9a-f]{12}$/);
  });

  it('accepts a text column and explicit ids; errors name file:line:field', () => {
    expect(parseQuestionsCsv('id,text\nq1,Hello?\n')[0]).toEqual({ id: 'q1', domain: 'unspecified', text: 'Hello?' });
    const missing = thrown(() => parseQuestionsCsv('id,prompt\n1,x\n', 'q.csv'));
    expect(missing.message).toMatch(/^q\.csv:1: header: no "question" or "text" column/);
    const empty = thrown(() => parseQuestionsCsv('id,question\n1,"  "\n', 'q.csv'));
    expect(empty.message).toBe('q.csv:2: question: empty question');
    const dup = thrown(() => parseQuestionsCsv('id,question\n1,a?\n1,b?\n', 'q.csv'));
    expect(dup.message).toBe('q.csv:3: id: duplicate question id "1" (first on line 2)');
  });

  it('reads JSONL with text or question and reports bad lines by number', () => {
    const jsonl = '{"id":"a","text":"One?"}\n\n{"question":"Two?","domain":"x","subdomain":"y"}\n';
    expect(parseQuestionsJsonl(jsonl)).toEqual([
      { id: 'a', domain: 'unspecified', text: 'One?' },
      { id: questionIdFromText('Two?'), domain: 'x', subdomain: 'y', text: 'Two?' },
    ]);
    expect(thrown(() => parseQuestionsJsonl('{"text":"ok"}\n{"text": oops}\n', 'u.jsonl')).message).toMatch(/^u\.jsonl:2: json: not valid JSON/);
    expect(thrown(() => parseQuestionsJsonl('{"text":"ok"}\n{"id":"b"}\n', 'u.jsonl')).message).toBe('u.jsonl:2: text: missing "text" (or "question")');
    expect(thrown(() => parseQuestionsJsonl('{"text":3}\n', 'u.jsonl')).field).toBe('text');
    expect(thrown(() => parseQuestionsJsonl('[1]\n', 'u.jsonl')).message).toBe('u.jsonl:1: (line): expected a JSON object');
  });

  it('the strict built-in format demands every field and no extra ones', () => {
    const ok = '{"id":"x-1","domain":"d","subdomain":"s","text":"T?"}\n';
    expect(parseBuiltinQuestionsJsonl(ok)).toHaveLength(1);
    expect(thrown(() => parseBuiltinQuestionsJsonl(`${ok}{"id":"x-2","domain":"d","text":"T?"}\n`, 'b.jsonl')).message).toMatch(/^b\.jsonl:2: subdomain: /);
    expect(thrown(() => parseBuiltinQuestionsJsonl('{"id":"x 1","domain":"d","subdomain":"s","text":"T?"}', 'b.jsonl')).field).toBe('id');
    expect(thrown(() => parseBuiltinQuestionsJsonl('{"id":"x","domain":"d","subdomain":"s","text":"T?","extra":1}', 'b.jsonl')).line).toBe(1);
  });

  it('loads files by extension with a content hash and rejects unknown types', () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-q-'));
    writeFileSync(join(dir, 'q.csv'), 'question\nShould I?\n');
    writeFileSync(join(dir, 'q.jsonl'), '{"text":"Should I?"}\n');
    writeFileSync(join(dir, 'q.txt'), 'Should I?\n');
    const csv = loadQuestionsFile(join(dir, 'q.csv'));
    const jsonl = loadQuestionsFile(join(dir, 'q.jsonl'));
    expect(csv.questions).toEqual(jsonl.questions);
    expect(csv.sha256).toMatch(/^[0-9a-f]{64}$/);
    expect(() => loadQuestionsFile(join(dir, 'q.txt'))).toThrow(/unsupported question file type/);
    expect(() => loadQuestionsFile(join(dir, 'missing.csv'))).toThrow(/file not found/);
  });
});

describe('Hugging Face datasets-server loader (local fixture server)', () => {
  const TOTAL = 7;
  const rows = Array.from({ length: TOTAL }, (_, i) => ({
    row_idx: i,
    row: { question: `Question number ${i}?`, category: i % 2 === 0 ? 'even' : 'odd', qid: `id-${i}` },
    truncated_cells: [] as string[],
  }));
  const requests: { url: URL; auth: string | undefined }[] = [];
  let server: Server;
  let base: string;

  function handle(req: IncomingMessage, res: import('node:http').ServerResponse) {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    requests.push({ url, auth: req.headers.authorization });
    const dataset = url.searchParams.get('dataset');
    if (url.pathname !== '/rows' || dataset === 'missing/ds') {
      res.writeHead(404, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: 'Not found.' }));
      return;
    }
    if (dataset === 'gated/ds' && req.headers.authorization === undefined) {
      res.writeHead(401);
      res.end('{"error":"unauthorized"}');
      return;
    }
    if (dataset === 'broken/ds') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"rows": "nope"}');
      return;
    }
    const offset = Number(url.searchParams.get('offset'));
    const length = Number(url.searchParams.get('length'));
    const page = rows.slice(offset, offset + length);
    const body =
      dataset === 'text-only/ds'
        ? page.map((r) => ({ ...r, row: { text: r.row.question } }))
        : dataset === 'truncated/ds'
          ? page.map((r) => ({ ...r, truncated_cells: ['question'] }))
          : page;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        features: [{ feature_idx: 0, name: 'question', type: { dtype: 'string', _type: 'Value' } }],
        rows: body,
        num_rows_total: TOTAL,
        num_rows_per_page: 100,
        partial: false,
      }),
    );
  }

  beforeAll(async () => {
    server = createServer(handle);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('pages through /rows with offset and length and maps columns', async () => {
    requests.length = 0;
    const set = await loadHuggingFaceQuestions({
      dataset: 'org/ds',
      config: 'default',
      split: 'test',
      pageSize: 3,
      baseUrl: `${base}/`,
      idColumn: 'qid',
      domainColumn: 'category',
      env: {},
    });
    expect(set.questions).toHaveLength(TOTAL);
    expect(set.questions[4]).toEqual({ id: 'id-4', domain: 'even', text: 'Question number 4?' });
    expect(set.source).toBe('hf:org/ds (config default, split test)');
    expect(requests.map((r) => [r.url.searchParams.get('offset'), r.url.searchParams.get('length')])).toEqual([
      ['0', '3'],
      ['3', '3'],
      ['6', '3'],
    ]);
    expect(requests[0]!.url.searchParams.get('dataset')).toBe('org/ds');
    expect(requests[0]!.url.searchParams.get('split')).toBe('test');
    expect(requests.every((r) => r.auth === undefined)).toBe(true);
  });

  it('honours a limit, finds a text column by itself and sends HF_TOKEN as a bearer header', async () => {
    requests.length = 0;
    const set = await loadHuggingFaceQuestions({
      dataset: 'text-only/ds',
      baseUrl: base,
      limit: 4,
      pageSize: 100,
      env: { HF_TOKEN: 'hf_test_token' },
    });
    expect(set.questions.map((q) => q.text)).toEqual([0, 1, 2, 3].map((i) => `Question number ${i}?`));
    expect(set.questions[0]!.id).toBe(questionIdFromText('Question number 0?'));
    expect(requests).toHaveLength(1);
    expect(requests[0]!.url.searchParams.get('length')).toBe('4');
    expect(requests[0]!.auth).toBe('Bearer hf_test_token');
    await expect(loadHuggingFaceQuestions({ dataset: 'gated/ds', baseUrl: base, env: { HF_TOKEN: 'x' } })).resolves.toBeDefined();
  });

  it('turns HTTP and shape errors into InputErrors with hints', async () => {
    const notFound = loadHuggingFaceQuestions({ dataset: 'missing/ds', baseUrl: base, env: {} });
    await expect(notFound).rejects.toThrow(InputError);
    await expect(notFound).rejects.toThrow(/HTTP 404/);
    const gated = await loadHuggingFaceQuestions({ dataset: 'gated/ds', baseUrl: base, env: {} }).catch((e: InputError) => e);
    expect((gated as InputError).hint).toMatch(/HF_TOKEN/);
    await expect(loadHuggingFaceQuestions({ dataset: 'broken/ds', baseUrl: base, env: {} })).rejects.toThrow(/unexpected \/rows response/);
    await expect(loadHuggingFaceQuestions({ dataset: 'truncated/ds', baseUrl: base, env: {} })).rejects.toThrow(
      /rows\[0\]\.question: the datasets server truncated this cell/,
    );
    await expect(loadHuggingFaceQuestions({ dataset: 'org/ds', baseUrl: base, column: 'nope', env: {} })).rejects.toThrow(/column "nope" not found/);
    await expect(loadHuggingFaceQuestions({ dataset: 'org/ds', baseUrl: base, pageSize: 101 })).rejects.toThrow(InvalidArgumentError);
  });

  it('reports an unreachable server as an InputError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    await expect(loadHuggingFaceQuestions({ dataset: 'org/ds', baseUrl: `http://127.0.0.1:${port}`, env: {} })).rejects.toThrow(
      /cannot reach the datasets server/,
    );
  });
});

describe('CSV round trip (property)', () => {
  it('toCsv → parseCsvTable returns every string unchanged', async () => {
    const fc = await import('fast-check');
    const cell = fc.string({ unit: fc.constantFrom('a', 'b', ' ', ',', '"', '\n', '\r', '\r\n', 'é', '\t'), maxLength: 12 });
    fc.assert(
      fc.property(fc.array(fc.tuple(cell, cell, cell), { minLength: 1, maxLength: 6 }), (rows) => {
        // A row whose every cell is empty is a blank line; give it content so it counts as a row.
        const data = rows.map(([a, b, c]) => [`k${a}`, b, c]);
        const table = parseCsvTable(toCsv(['x', 'y', 'z'], data));
        expect(table.rows.map((row) => [row.values.x, row.values.y, row.values.z])).toEqual(data);
      }),
      { numRuns: 300, seed: 42 },
    );
  });
});
