import { InputError } from '../core/errors.js';

/**
 * A small, strict reader of the Python literal expressions that hold a
 * reference repository's texts: string literals (every prefix but bytes,
 * implicit concatenation, all escapes), numbers, True/False/None, names,
 * lists, tuples, dicts and calls such as `Probe("I01", "identity", "…")` or
 * `re.compile(r"…", re.IGNORECASE)`. Anything else (operators, comprehensions,
 * f-string expressions beyond a bare name) is rejected with the file and line,
 * so a clone of another version fails loudly instead of being half read.
 */

/** One piece of a string: literal text, or an f-string field naming a variable. */
export type StringPart = { text: string } | { field: string };

export type PyValue =
  | { kind: 'str'; value: string; parts: StringPart[]; line: number }
  | { kind: 'num'; value: number; line: number }
  | { kind: 'const'; value: boolean | null; line: number }
  | { kind: 'name'; value: string; line: number }
  | { kind: 'list' | 'tuple'; items: PyValue[]; line: number }
  | { kind: 'dict'; entries: Array<[PyValue, PyValue]>; line: number }
  | { kind: 'call'; callee: string; args: PyValue[]; kwargs: Record<string, PyValue>; line: number };

class Reader {
  pos: number;
  depth = 0;

  constructor(
    readonly source: string,
    start: number,
    readonly file: string,
  ) {
    this.pos = start;
  }

  line(at = this.pos): number {
    let line = 1;
    for (let i = 0; i < at && i < this.source.length; i++) if (this.source.charCodeAt(i) === 10) line++;
    return line;
  }

  fail(message: string, at = this.pos): never {
    throw new InputError(
      message,
      { file: this.file, line: this.line(at) },
      {
        hint: 'the materials loader expects the layout of the published reference repository; is this clone another version?',
      },
    );
  }

  /** Skips spaces, comments and (inside brackets, or after a backslash) line breaks. */
  skip(): void {
    const s = this.source;
    while (this.pos < s.length) {
      const c = s[this.pos] as string;
      if (c === ' ' || c === '\t' || c === '\r' || c === '\f') this.pos++;
      else if (c === '\\' && s[this.pos + 1] === '\n') this.pos += 2;
      else if (c === '\\' && s[this.pos + 1] === '\r' && s[this.pos + 2] === '\n') this.pos += 3;
      else if (c === '#') {
        while (this.pos < s.length && s[this.pos] !== '\n') this.pos++;
      } else if (c === '\n' && this.depth > 0) this.pos++;
      else break;
    }
  }

  peek(): string {
    this.skip();
    return this.source[this.pos] ?? '';
  }

  expect(char: string): void {
    if (this.peek() !== char) this.fail(`expected "${char}", found ${describe(this.source, this.pos)}`);
    this.pos++;
  }

  /** After the expression: only spaces or a comment before the end of the line. */
  endOfStatement(): void {
    this.skip();
    const c = this.source[this.pos];
    if (c !== undefined && c !== '\n' && c !== ';') this.fail(`unexpected ${describe(this.source, this.pos)} after the value`);
  }
}

function describe(source: string, at: number): string {
  const c = source[at];
  return c === undefined ? 'end of file' : c === '\n' ? 'end of line' : `"${source.slice(at, at + 12).split('\n')[0]}"`;
}

const STRING_START = /^([rRuUfF]|[rR][fF]|[fF][rR])?(['"])/u;
const NAME = /^[A-Za-z_][A-Za-z0-9_]*/u;
const NUMBER = /^(?:\d[\d_]*(?:\.\d[\d_]*)?(?:[eE][+-]?\d+)?|\.\d[\d_]*(?:[eE][+-]?\d+)?)/u;

function parseExpression(r: Reader): PyValue {
  let value = parseAtom(r);
  for (;;) {
    const c = r.peek();
    if (c === '.' && value.kind === 'name') {
      r.pos++;
      r.skip();
      const match = NAME.exec(r.source.slice(r.pos));
      if (!match) r.fail('expected a name after "."');
      r.pos += match[0].length;
      value = { kind: 'name', value: `${value.value}.${match[0]}`, line: value.line };
    } else if (c === '(' && value.kind === 'name') {
      value = parseCall(r, value.value, value.line);
    } else {
      return value;
    }
  }
}

function parseCall(r: Reader, callee: string, line: number): PyValue {
  r.expect('(');
  r.depth++;
  const args: PyValue[] = [];
  const kwargs: Record<string, PyValue> = {};
  commaList(r, ')', ` in the call of ${callee}`, () => {
    const keyword = /^([A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)/u.exec(r.source.slice(r.pos));
    if (keyword) {
      r.pos += keyword[0].length;
      kwargs[keyword[1] as string] = parseExpression(r);
    } else {
      if (Object.keys(kwargs).length > 0) r.fail('positional argument after a keyword argument');
      args.push(parseExpression(r));
    }
  });
  r.depth--;
  return { kind: 'call', callee, args, kwargs, line };
}

/** Items read up to `close` (consumed), separated by commas, a trailing comma allowed. */
function commaList<T>(r: Reader, close: string, where: string, item: () => T): T[] {
  const items: T[] = [];
  while (r.peek() !== close) {
    items.push(item());
    if (r.peek() === ',') r.pos++;
    else if (r.peek() !== close) r.fail(`expected "," or "${close}"${where}, found ${describe(r.source, r.pos)}`);
  }
  r.pos++;
  return items;
}

function parseAtom(r: Reader): PyValue {
  const c = r.peek();
  const line = r.line();
  const rest = r.source.slice(r.pos, r.pos + 40);
  if (STRING_START.test(rest)) return parseStrings(r);
  if (c === '[') {
    r.pos++;
    r.depth++;
    const items = commaList(r, ']', '', () => parseExpression(r));
    r.depth--;
    return { kind: 'list', items, line };
  }
  if (c === '(') {
    r.pos++;
    r.depth++;
    if (r.peek() === ')') {
      r.pos++;
      r.depth--;
      return { kind: 'tuple', items: [], line };
    }
    const first = parseExpression(r);
    if (r.peek() === ')') {
      r.pos++;
      r.depth--;
      return first;
    }
    r.expect(',');
    const items = [first, ...commaList(r, ')', '', () => parseExpression(r))];
    r.depth--;
    return { kind: 'tuple', items, line };
  }
  if (c === '{') {
    r.pos++;
    r.depth++;
    const entries = commaList(r, '}', '', (): [PyValue, PyValue] => {
      const key = parseExpression(r);
      r.expect(':');
      return [key, parseExpression(r)];
    });
    r.depth--;
    return { kind: 'dict', entries, line };
  }
  if (c === '-' || c === '+') {
    r.pos++;
    const inner = parseAtom(r);
    if (inner.kind !== 'num') r.fail('a sign applies only to a number');
    return { ...inner, value: c === '-' ? -inner.value : inner.value };
  }
  const number = NUMBER.exec(r.source.slice(r.pos));
  if (number) {
    r.pos += number[0].length;
    return { kind: 'num', value: Number(number[0].replace(/_/gu, '')), line };
  }
  const name = NAME.exec(r.source.slice(r.pos));
  if (name) {
    r.pos += name[0].length;
    if (name[0] === 'True' || name[0] === 'False') return { kind: 'const', value: name[0] === 'True', line };
    if (name[0] === 'None') return { kind: 'const', value: null, line };
    return { kind: 'name', value: name[0], line };
  }
  return r.fail(`expected a value, found ${describe(r.source, r.pos)}`);
}

/** One or more adjacent string literals, joined as Python joins them. */
function parseStrings(r: Reader): PyValue {
  const line = r.line();
  const parts: StringPart[] = [];
  let any = false;
  for (;;) {
    r.skip();
    const match = STRING_START.exec(r.source.slice(r.pos, r.pos + 4));
    if (!match) break;
    any = true;
    const prefix = (match[1] ?? '').toLowerCase();
    r.pos += prefix.length;
    parts.push(...readStringLiteral(r, prefix.includes('r'), prefix.includes('f')));
  }
  if (!any) r.fail('expected a string');
  const merged: StringPart[] = [];
  for (const part of parts) {
    const last = merged[merged.length - 1];
    if ('text' in part && last && 'text' in last) last.text += part.text;
    else merged.push({ ...part });
  }
  const value = merged.map((p) => ('text' in p ? p.text : `{${p.field}}`)).join('');
  return { kind: 'str', value, parts: merged, line };
}

const SIMPLE_ESCAPES: Record<string, string> = {
  '\\': '\\',
  "'": "'",
  '"': '"',
  a: '\x07',
  b: '\b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
};

function readStringLiteral(r: Reader, raw: boolean, fstring: boolean): StringPart[] {
  const s = r.source;
  const quote = s.startsWith(s[r.pos]!.repeat(3), r.pos) ? s[r.pos]!.repeat(3) : (s[r.pos] as string);
  const start = r.pos;
  r.pos += quote.length;
  let text = '';
  for (;;) {
    if (r.pos >= s.length) r.fail('unterminated string', start);
    if (s.startsWith(quote, r.pos)) {
      r.pos += quote.length;
      break;
    }
    const c = s[r.pos] as string;
    if (c === '\n' && quote.length === 1) r.fail('unterminated string', start);
    if (c !== '\\') {
      text += c;
      r.pos++;
      continue;
    }
    const next = s[r.pos + 1] ?? '';
    if (raw) {
      // A raw string keeps the backslash; it still stops the next quote from ending the string.
      text += c + next;
      r.pos += 2;
      continue;
    }
    r.pos += 2;
    if (next === '\n') continue;
    if (next in SIMPLE_ESCAPES) {
      text += SIMPLE_ESCAPES[next];
      continue;
    }
    if (/[0-7]/u.test(next)) {
      const octal = /^[0-7]{1,3}/u.exec(s.slice(r.pos - 1, r.pos + 2))?.[0] as string;
      text += String.fromCodePoint(Number.parseInt(octal, 8));
      r.pos += octal.length - 1;
      continue;
    }
    const width = next === 'x' ? 2 : next === 'u' ? 4 : next === 'U' ? 8 : 0;
    if (width > 0) {
      const hex = s.slice(r.pos, r.pos + width);
      if (!new RegExp(`^[0-9a-fA-F]{${width}}$`, 'u').test(hex)) r.fail(`bad \\${next} escape`);
      text += String.fromCodePoint(Number.parseInt(hex, 16));
      r.pos += width;
      continue;
    }
    if (next === 'N') r.fail('named \\N{…} escapes are not supported');
    // Python keeps an unknown escape as written.
    text += `\\${next}`;
  }
  // An f-string's fields: only bare names (`{question}`) are accepted.
  return fstring ? splitFields(text, 'f-string', 'an f-string', (message) => r.fail(message, start)) : [{ text }];
}

/** Splits a `str.format` template: `{name}` fields, `{{`/`}}` braces; anything else is an error. */
export function formatTemplateParts(template: string, file: string, line: number): StringPart[] {
  return splitFields(template, 'template', 'a format template', (message) => {
    throw new InputError(message, { file, line });
  });
}

/**
 * Splits text into literal parts and `{name}` fields (`{{`/`}}` are braces).
 * A field that is not a bare name, or a single `}`, goes to `fail` with a
 * message naming the text as `kind` ("f-string field …") or `inKind` ("… in an f-string").
 */
function splitFields(text: string, kind: string, inKind: string, fail: (message: string) => never): StringPart[] {
  const parts: StringPart[] = [];
  let literal = '';
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if ((c === '{' || c === '}') && text[i + 1] === c) {
      literal += c;
      i++;
    } else if (c === '{') {
      const end = text.indexOf('}', i);
      const field = end < 0 ? '' : text.slice(i + 1, end);
      if (!/^[A-Za-z_][A-Za-z0-9_]*$/u.test(field)) fail(`${kind} field "{${field}" is not a bare name`);
      if (literal !== '') parts.push({ text: literal });
      literal = '';
      parts.push({ field });
      i = end;
    } else if (c === '}') {
      fail(`single "}" in ${inKind}`);
    } else {
      literal += c;
    }
  }
  if (literal !== '') parts.push({ text: literal });
  return parts;
}

/** Fills a template's fields; every field must be given, and every given value used. */
export function fillTemplate(parts: readonly StringPart[], values: Record<string, string>): string {
  return parts.map((p) => ('text' in p ? p.text : (values[p.field] ?? ''))).join('');
}

/**
 * The inverse of fillTemplate: the field values that fill `parts` to exactly `text`, or null when
 * the text was not made from this template. Fields match lazily, so a value that contains the
 * next literal part is split at its first occurrence (the simulated models only need templates
 * whose literals do not occur in their values).
 */
export function matchTemplate(parts: readonly StringPart[], text: string): Record<string, string> | null {
  const fields: string[] = [];
  const source = parts
    .map((p) => {
      if ('text' in p) return p.text.replace(/[.*+?^${}()|[\]\\]/gu, '\\$&');
      fields.push(p.field);
      return '([\\s\\S]*?)';
    })
    .join('');
  const match = new RegExp(`^${source}$`, 'u').exec(text);
  if (match === null) return null;
  const values: Record<string, string> = {};
  fields.forEach((field, i) => {
    values[field] = match[i + 1] ?? '';
  });
  return values;
}

/** The names assigned at the start of a line with this indentation (`NAME = …` or `NAME: type = …`). */
function assignmentPattern(name: string, indent: string): RegExp {
  return new RegExp(`^${indent}${name}[ \\t]*(?::[^=\\n]*)?=(?!=)[ \\t]*`, 'gmu');
}

/**
 * The value of the module-level assignment `name = …` (or `name: T = …`).
 * The name must be assigned exactly once at the top level.
 */
export function moduleConstant(source: string, name: string, file: string): PyValue {
  const matches = [...source.matchAll(assignmentPattern(name, ''))];
  if (matches.length === 0)
    throw new InputError(`no top-level assignment of ${name}`, { file }, { hint: 'is this clone another version of the reference repository?' });
  if (matches.length > 1) throw new InputError(`${name} is assigned ${matches.length} times at the top level`, { file });
  const match = matches[0] as RegExpMatchArray;
  const reader = new Reader(source, (match.index ?? 0) + match[0].length, file);
  const value = parseExpression(reader);
  reader.endOfStatement();
  return value;
}

/** The lines of a top-level or nested `def name(…)` body, as [start, end) offsets. */
function functionBody(source: string, name: string, file: string): { start: number; end: number; indent: string } {
  const defs = [...source.matchAll(new RegExp(`^([ \\t]*)def[ \\t]+${name}[ \\t]*\\(`, 'gmu'))];
  if (defs.length !== 1) {
    throw new InputError(defs.length === 0 ? `no function ${name}` : `function ${name} is defined ${defs.length} times`, { file });
  }
  const def = defs[0] as RegExpMatchArray;
  const indent = def[1] as string;
  const start = source.indexOf('\n', def.index ?? 0) + 1;
  const lines = source.slice(start).split('\n');
  let offset = start;
  let end = source.length;
  for (const text of lines) {
    if (text.trim() !== '' && !text.startsWith(`${indent} `) && !text.startsWith(`${indent}\t`) && !/^\s*[)#]/u.test(text)) {
      end = offset;
      break;
    }
    offset += text.length + 1;
  }
  return { start, end, indent };
}

/** The value of the first `return …` in a function body. */
export function functionReturn(source: string, fn: string, file: string): PyValue {
  const body = functionBody(source, fn, file);
  const match = /^[ \t]+return[ \t]+/mu.exec(source.slice(body.start, body.end));
  if (!match) throw new InputError(`function ${fn} has no return statement`, { file });
  const reader = new Reader(source, body.start + match.index + match[0].length, file);
  const value = parseExpression(reader);
  reader.endOfStatement();
  return value;
}
