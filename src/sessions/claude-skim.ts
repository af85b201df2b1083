/**
 * Counting a Claude Code transcript needs a few fields of each line, not its long
 * texts. `skimClaudeLine` reads those fields straight from the line's bytes and
 * validates the rest of the line as JSON without building it. Pure.
 *
 * The result has the shape `JSON.parse` would give for the fields ClaudeParser reads
 * in counting mode; every other value is either absent or replaced by `SKIPPED`
 * (an empty array: not a string, number, boolean, null or plain object, so every
 * check the parser makes on such a field reads it as "no usable value", as it would
 * the original composite). Long texts keep only a head: enough for `slice(0, 200)`
 * and, because a blank head makes the whole string decode, exact for `trim() !== ''`.
 *
 * `undefined` means "not sure": the line is not valid JSON, not an object, has a
 * key with an escape, a needed key twice, or nests too deep. The caller then
 * parses the line with `JSON.parse`, so the fast path never changes a result.
 */

import { HAS_ESCAPE, QuoteScanner } from './json-quotes.js';

export const SKIPPED: readonly never[] = Object.freeze([]);

/**
 * `uuid` / `parentUuid` hold this when the id is a plain string of the line: it is
 * then at [uuidAt, uuidEnd) / [parentAt, parentEnd) of the line's bytes and was not
 * decoded (ClaudeParser keys ids by their bytes).
 */
export const IN_LINE: unique symbol = Symbol('id in the line bytes');

export interface SkimmedUsage {
  input_tokens?: unknown;
  output_tokens?: unknown;
  cache_read_input_tokens?: unknown;
  cache_creation_input_tokens?: unknown;
}

export interface SkimmedBlock {
  type?: unknown;
  name?: unknown;
  id?: unknown;
  text?: unknown;
}

export interface SkimmedMessage {
  model?: unknown;
  id?: unknown;
  usage?: unknown;
  content?: unknown;
}

/** The top-level fields ClaudeParser reads. */
export interface SkimmedRecord {
  uuidAt: number;
  uuidEnd: number;
  parentAt: number;
  parentEnd: number;
  type?: unknown;
  sessionId?: unknown;
  cwd?: unknown;
  version?: unknown;
  uuid?: unknown;
  parentUuid?: unknown;
  timestamp?: unknown;
  agentId?: unknown;
  isSidechain?: unknown;
  isApiErrorMessage?: unknown;
  isCompactSummary?: unknown;
  isMeta?: unknown;
  subtype?: unknown;
  logicalParentUuid?: unknown;
  compactMetadata?: unknown;
  microcompactMetadata?: unknown;
  message?: unknown;
}

// Classes with every field present: one hidden class each, so field stores stay monomorphic.
class Top implements SkimmedRecord {
  uuidAt = -1;
  uuidEnd = -1;
  parentAt = -1;
  parentEnd = -1;
  type: unknown = undefined;
  sessionId: unknown = undefined;
  cwd: unknown = undefined;
  version: unknown = undefined;
  uuid: unknown = undefined;
  parentUuid: unknown = undefined;
  timestamp: unknown = undefined;
  agentId: unknown = undefined;
  isSidechain: unknown = undefined;
  isApiErrorMessage: unknown = undefined;
  isCompactSummary: unknown = undefined;
  isMeta: unknown = undefined;
  subtype: unknown = undefined;
  logicalParentUuid: unknown = undefined;
  compactMetadata: unknown = undefined;
  microcompactMetadata: unknown = undefined;
  message: unknown = undefined;
}
class Message implements SkimmedMessage {
  model: unknown = undefined;
  id: unknown = undefined;
  usage: unknown = undefined;
  content: unknown = undefined;
}
class Usage implements SkimmedUsage {
  input_tokens: unknown = undefined;
  output_tokens: unknown = undefined;
  cache_read_input_tokens: unknown = undefined;
  cache_creation_input_tokens: unknown = undefined;
}
class BlockFields implements SkimmedBlock {
  type: unknown = undefined;
  name: unknown = undefined;
  id: unknown = undefined;
  text: unknown = undefined;
}
class CompactFields {
  trigger: unknown = undefined;
  preTokens: unknown = undefined;
}
class MicrocompactFields {
  trigger: unknown = undefined;
  compactedToolIds: unknown = undefined;
}

/** Raw bytes of a text kept before it is cut: ≥ 340 UTF-16 units even if all are `\uXXXX` escapes. */
const TEXT_HEAD_BYTES = 2048;
const MAX_DEPTH = 512;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

/** A failed read. Values are never this object, so identity marks the failure. */
const FAIL = Symbol('fail');
type Read = unknown;

/** Position after the last value read (a second return value without an allocation). */
let pos = 0;
/** Whether the last string scanned held an escape. */
let escaped = false;
const stack = new Uint8Array(MAX_DEPTH);

/** Created on first use; undefined where WebAssembly is not available (every line then goes to JSON.parse). */
let scanner: QuoteScanner | undefined | null = null;
/** Quote positions of the current line (see json-quotes.ts), how many, and the next one to meet. */
let quotes: Uint32Array = new Uint32Array(0);
let quoteCount = 0;
let nextQuote = 0;

export function skimClaudeLine(b: Buffer): SkimmedRecord | undefined {
  if (scanner === null) scanner = QuoteScanner.create();
  if (scanner === undefined) return undefined;
  const count = scanner.scan(b);
  if (count < 0) return undefined;
  quotes = scanner.positions;
  quoteCount = count;
  nextQuote = 0;
  const out = new Top();
  const start = ws(b, 0);
  if (b[start] !== LBRACE) return undefined;
  if (members(b, start, out, topField) === FAIL) return undefined;
  return ws(b, pos) === b.length && nextQuote === quoteCount ? out : undefined;
}

function ws(b: Buffer, i: number): number {
  for (;;) {
    const c = b[i];
    if (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) i += 1;
    else return i;
  }
}

type FieldReader<T> = (b: Buffer, key: string, i: number, target: T) => boolean;

/**
 * Reads the object starting at `b[i] === '{'`, handing each key to `field`, which reads
 * the value (setting `pos`) and returns false when it cannot. Unknown keys are skipped.
 */
function members<T>(b: Buffer, i: number, target: T, field: FieldReader<T>): Read {
  i = ws(b, i + 1);
  if (b[i] === RBRACE) {
    pos = i + 1;
    return target;
  }
  for (;;) {
    if (b[i] !== QUOTE) return FAIL;
    const keyEnd = scanString(b, i + 1);
    if (keyEnd < 0 || escaped) return FAIL;
    const key = knownKey(b, i + 1, keyEnd - 1);
    i = ws(b, keyEnd);
    if (b[i] !== COLON) return FAIL;
    i = ws(b, i + 1);
    if (!field(b, key, i, target)) return FAIL;
    i = ws(b, pos);
    const c = b[i];
    if (c === COMMA) {
      i = ws(b, i + 1);
      continue;
    }
    if (c !== RBRACE) return FAIL;
    pos = i + 1;
    return target;
  }
}

/** Reads an array of values with `item`, or FAIL. */
function elements(b: Buffer, i: number, item: (b: Buffer, i: number) => Read): Read {
  const list: unknown[] = [];
  i = ws(b, i + 1);
  if (b[i] === RBRACKET) {
    pos = i + 1;
    return list;
  }
  for (;;) {
    const value = item(b, i);
    if (value === FAIL) return FAIL;
    list.push(value);
    i = ws(b, pos);
    const c = b[i];
    if (c === COMMA) {
      i = ws(b, i + 1);
      continue;
    }
    if (c !== RBRACKET) return FAIL;
    pos = i + 1;
    return list;
  }
}

function topField(b: Buffer, key: string, i: number, out: SkimmedRecord): boolean {
  switch (key) {
    case 'type':
      if (out.type !== undefined) return false;
      out.type = cachedScalar(b, i, 0);
      return out.type !== FAIL;
    case 'sessionId':
      if (out.sessionId !== undefined) return false;
      out.sessionId = cachedScalar(b, i, 1);
      return out.sessionId !== FAIL;
    case 'cwd':
      if (out.cwd !== undefined) return false;
      out.cwd = cachedScalar(b, i, 2);
      return out.cwd !== FAIL;
    case 'version':
      if (out.version !== undefined) return false;
      out.version = cachedScalar(b, i, 3);
      return out.version !== FAIL;
    case 'uuid':
      if (out.uuid !== undefined) return false;
      if (b[i] === QUOTE) {
        const end = scanString(b, i + 1);
        if (end < 0) return false;
        pos = end;
        if (!escaped) {
          out.uuid = IN_LINE;
          out.uuidAt = i + 1;
          out.uuidEnd = end - 1;
        } else out.uuid = decode(b, i + 1, end - 1, true);
        return true;
      }
      out.uuid = scalar(b, i);
      return out.uuid !== FAIL;
    case 'parentUuid':
      if (out.parentUuid !== undefined) return false;
      if (b[i] === QUOTE) {
        const end = scanString(b, i + 1);
        if (end < 0) return false;
        pos = end;
        if (!escaped) {
          out.parentUuid = IN_LINE;
          out.parentAt = i + 1;
          out.parentEnd = end - 1;
        } else out.parentUuid = decode(b, i + 1, end - 1, true);
        return true;
      }
      out.parentUuid = scalar(b, i);
      return out.parentUuid !== FAIL;
    case 'timestamp':
      if (out.timestamp !== undefined) return false;
      out.timestamp = scalar(b, i);
      return out.timestamp !== FAIL;
    case 'agentId':
      if (out.agentId !== undefined) return false;
      out.agentId = cachedScalar(b, i, 5);
      return out.agentId !== FAIL;
    case 'isSidechain':
      if (out.isSidechain !== undefined) return false;
      out.isSidechain = scalar(b, i);
      return out.isSidechain !== FAIL;
    case 'isApiErrorMessage':
      if (out.isApiErrorMessage !== undefined) return false;
      out.isApiErrorMessage = scalar(b, i);
      return out.isApiErrorMessage !== FAIL;
    case 'isCompactSummary':
      if (out.isCompactSummary !== undefined) return false;
      out.isCompactSummary = scalar(b, i);
      return out.isCompactSummary !== FAIL;
    case 'isMeta':
      if (out.isMeta !== undefined) return false;
      out.isMeta = scalar(b, i);
      return out.isMeta !== FAIL;
    case 'subtype':
      if (out.subtype !== undefined) return false;
      out.subtype = cachedScalar(b, i, 6);
      return out.subtype !== FAIL;
    case 'logicalParentUuid':
      if (out.logicalParentUuid !== undefined) return false;
      out.logicalParentUuid = scalar(b, i);
      return out.logicalParentUuid !== FAIL;

    case 'message':
      if (out.message !== undefined) return false;
      out.message = b[i] === LBRACE ? members(b, i, new Message(), messageField) : scalar(b, i);
      return out.message !== FAIL;

    case 'compactMetadata':
      if (out.compactMetadata !== undefined) return false;
      out.compactMetadata = b[i] === LBRACE ? members(b, i, new CompactFields(), compactField) : scalar(b, i);
      return out.compactMetadata !== FAIL;

    case 'microcompactMetadata':
      if (out.microcompactMetadata !== undefined) return false;
      out.microcompactMetadata = b[i] === LBRACE ? members(b, i, new MicrocompactFields(), microcompactField) : scalar(b, i);
      return out.microcompactMetadata !== FAIL;
    default:
      return skip(b, i);
  }
}

function messageField(b: Buffer, key: string, i: number, out: SkimmedMessage): boolean {
  switch (key) {
    case 'model':
      if (out.model !== undefined) return false;
      out.model = cachedScalar(b, i, 7);
      return out.model !== FAIL;
    case 'id':
      if (out.id !== undefined) return false;
      out.id = cachedScalar(b, i, 8);
      return out.id !== FAIL;

    case 'usage':
      if (out.usage !== undefined) return false;
      out.usage = b[i] === LBRACE ? members(b, i, new Usage(), usageField) : scalar(b, i);
      return out.usage !== FAIL;

    case 'content':
      if (out.content !== undefined) return false;
      out.content = b[i] === LBRACKET ? elements(b, i, contentItem) : text(b, i);
      return out.content !== FAIL;
    default:
      return skip(b, i);
  }
}

function usageField(b: Buffer, key: string, i: number, out: SkimmedUsage): boolean {
  switch (key) {
    case 'input_tokens':
      if (out.input_tokens !== undefined) return false;
      out.input_tokens = scalar(b, i);
      return out.input_tokens !== FAIL;
    case 'output_tokens':
      if (out.output_tokens !== undefined) return false;
      out.output_tokens = scalar(b, i);
      return out.output_tokens !== FAIL;
    case 'cache_read_input_tokens':
      if (out.cache_read_input_tokens !== undefined) return false;
      out.cache_read_input_tokens = scalar(b, i);
      return out.cache_read_input_tokens !== FAIL;
    case 'cache_creation_input_tokens':
      if (out.cache_creation_input_tokens !== undefined) return false;
      out.cache_creation_input_tokens = scalar(b, i);
      return out.cache_creation_input_tokens !== FAIL;
    default:
      return skip(b, i);
  }
}

function contentItem(b: Buffer, i: number): Read {
  if (b[i] !== LBRACE) return skip(b, i) ? null : FAIL;
  return members(b, i, new BlockFields(), blockField);
}

function blockField(b: Buffer, key: string, i: number, out: SkimmedBlock): boolean {
  switch (key) {
    case 'type':
      if (out.type !== undefined) return false;
      out.type = cachedScalar(b, i, 9);
      return out.type !== FAIL;
    case 'name':
      if (out.name !== undefined) return false;
      out.name = cachedScalar(b, i, 10);
      return out.name !== FAIL;
    case 'id':
      if (out.id !== undefined) return false;
      out.id = scalar(b, i);
      return out.id !== FAIL;

    case 'text':
      if (out.text !== undefined) return false;
      out.text = text(b, i);
      return out.text !== FAIL;
    default:
      return skip(b, i);
  }
}

function compactField(b: Buffer, key: string, i: number, out: CompactFields): boolean {
  if (key === 'trigger') {
    if (out.trigger !== undefined) return false;
    out.trigger = scalar(b, i);
    return out.trigger !== FAIL;
  }
  if (key === 'preTokens') {
    if (out.preTokens !== undefined) return false;
    out.preTokens = scalar(b, i);
    return out.preTokens !== FAIL;
  }
  return skip(b, i);
}

function microcompactField(b: Buffer, key: string, i: number, out: MicrocompactFields): boolean {
  if (key === 'trigger') {
    if (out.trigger !== undefined) return false;
    out.trigger = scalar(b, i);
    return out.trigger !== FAIL;
  }
  if (key === 'compactedToolIds') {
    if (out.compactedToolIds !== undefined) return false;
    out.compactedToolIds = b[i] === LBRACKET ? elements(b, i, scalar) : scalar(b, i);
    return out.compactedToolIds !== FAIL;
  }
  return skip(b, i);
}

function skip(b: Buffer, i: number): boolean {
  const end = skipValue(b, i);
  if (end < 0) return false;
  pos = end;
  return true;
}

/** A string, number, boolean or null as JSON.parse gives it; a composite is validated and becomes SKIPPED. */
function scalar(b: Buffer, i: number): Read {
  const c = b[i];
  if (c === QUOTE) {
    const end = scanString(b, i + 1);
    if (end < 0) return FAIL;
    pos = end;
    return decode(b, i + 1, end - 1, escaped);
  }
  if (c === LBRACE || c === LBRACKET) return skip(b, i) ? SKIPPED : FAIL;
  const end = skipPrimitive(b, i);
  if (end < 0) return FAIL;
  pos = end;
  if (c === 0x74) return true;
  if (c === 0x66) return false;
  if (c === 0x6e) return null;
  return Number(b.toString('latin1', i, end));
}

/**
 * Most lines repeat the previous line's type, session id, cwd, version, model, tool
 * names, and their parentUuid is the previous uuid: a field's last string is reused
 * when its bytes are the same (comparing short bytes is cheaper than decoding).
 */
const SLOTS = 11;
const SLOT_BYTES = 96;
const slotBytes = Buffer.alloc(SLOTS * SLOT_BYTES);
const slotLength = new Int32Array(SLOTS).fill(-1);
const slotValue: string[] = new Array<string>(SLOTS).fill('');

function cachedScalar(b: Buffer, i: number, slot: number): Read {
  if (b[i] !== QUOTE) return scalar(b, i);
  const end = scanString(b, i + 1);
  if (end < 0) return FAIL;
  pos = end;
  const from = i + 1;
  const length = end - 1 - from;
  if (escaped || length > SLOT_BYTES) return decode(b, from, end - 1, escaped);
  const base = slot * SLOT_BYTES;
  if (slotLength[slot] === length) {
    let k = 0;
    while (k < length && slotBytes[base + k] === b[from + k]) k += 1;
    if (k === length) return slotValue[slot];
  }
  const value = b.toString('utf8', from, end - 1);
  b.copy(slotBytes, base, from, end - 1);
  slotLength[slot] = length;
  slotValue[slot] = value;
  return value;
}

/** Like `scalar`, but a long string keeps only its head (see the module comment). */
function text(b: Buffer, i: number): Read {
  if (b[i] !== QUOTE) return scalar(b, i);
  const from = i + 1;
  const end = scanString(b, from);
  if (end < 0) return FAIL;
  pos = end;
  const hasEscape = escaped;
  const to = end - 1;
  if (to - from <= TEXT_HEAD_BYTES) return decode(b, from, to, hasEscape);
  let cut = from + TEXT_HEAD_BYTES;
  if (hasEscape) {
    // Do not split an escape sequence.
    let j = from;
    while (j < cut) {
      if (b[j] === BACKSLASH) {
        const length = b[j + 1] === 0x75 ? 6 : 2;
        if (j + length > cut) {
          cut = j;
          break;
        }
        j += length;
      } else j += 1;
    }
  }
  // Nor a UTF-8 sequence.
  while (cut > from && (b[cut]! & 0xc0) === 0x80) cut -= 1;
  const head = decode(b, from, cut, hasEscape) as string;
  return head.trim() === '' ? decode(b, from, to, hasEscape) : head;
}

function decode(b: Buffer, from: number, to: number, hasEscape: boolean): string {
  if (!hasEscape) return b.toString('utf8', from, to);
  return JSON.parse(`"${b.toString('utf8', from, to)}"`) as string;
}

/**
 * Index after the closing quote of the string whose content starts at `i`, or -1. The
 * scanner has already found and checked every string of the line: strings are met in
 * order, so this is the next pair of quotes. Sets `escaped`.
 */
function scanString(_b: Buffer, i: number): number {
  const k = nextQuote;
  if (k + 1 >= quoteCount || quotes[k] !== i - 1) return -1;
  const close = quotes[k + 1]!;
  nextQuote = k + 2;
  escaped = close >= HAS_ESCAPE;
  return (close & 0x7fffffff) + 1;
}

/** Every key a reader looks for, by length: keys are matched on bytes, never decoded. */
const KEYS_BY_LENGTH: string[][] = [];
for (const name of [
  'type', 'sessionId', 'cwd', 'version', 'uuid', 'parentUuid', 'timestamp', 'agentId', 'isSidechain', 'isApiErrorMessage',
  'isCompactSummary', 'isMeta', 'subtype', 'logicalParentUuid', 'compactMetadata', 'microcompactMetadata', 'message',
  'model', 'id', 'usage', 'content', 'input_tokens', 'output_tokens', 'cache_read_input_tokens', 'cache_creation_input_tokens',
  'name', 'text', 'trigger', 'preTokens', 'compactedToolIds',
]) {
  const sameLength = KEYS_BY_LENGTH[name.length] ?? [];
  sameLength.push(name);
  KEYS_BY_LENGTH[name.length] = sameLength;
}

/** The known key spelled by the bytes [from, to), or '' (an unknown key). */
function knownKey(b: Buffer, from: number, to: number): string {
  const candidates = KEYS_BY_LENGTH[to - from];
  if (candidates === undefined) return '';
  for (const name of candidates) {
    let k = 0;
    while (k < name.length && name.charCodeAt(k) === b[from + k]) k += 1;
    if (k === name.length) return name;
  }
  return '';
}

function isDigit(c: number | undefined): boolean {
  return c !== undefined && c >= 0x30 && c <= 0x39;
}

/** End of a number or literal starting at `i`, or -1 (JSON grammar). */
function skipPrimitive(b: Buffer, i: number): number {
  const c = b[i];
  if (c === 0x74) return b[i + 1] === 0x72 && b[i + 2] === 0x75 && b[i + 3] === 0x65 ? i + 4 : -1;
  if (c === 0x66) return b[i + 1] === 0x61 && b[i + 2] === 0x6c && b[i + 3] === 0x73 && b[i + 4] === 0x65 ? i + 5 : -1;
  if (c === 0x6e) return b[i + 1] === 0x75 && b[i + 2] === 0x6c && b[i + 3] === 0x6c ? i + 4 : -1;
  let j = i;
  if (b[j] === 0x2d) j += 1;
  if (b[j] === 0x30) j += 1;
  else if (isDigit(b[j]) && b[j] !== 0x30) while (isDigit(b[j])) j += 1;
  else return -1;
  if (b[j] === 0x2e) {
    j += 1;
    if (!isDigit(b[j])) return -1;
    while (isDigit(b[j])) j += 1;
  }
  if (b[j] === 0x65 || b[j] === 0x45) {
    j += 1;
    if (b[j] === 0x2b || b[j] === 0x2d) j += 1;
    if (!isDigit(b[j])) return -1;
    while (isDigit(b[j])) j += 1;
  }
  return j;
}

/** End of any JSON value starting at `i` (validated, nothing built), or -1. Iterative: no recursion depth. */
function skipValue(b: Buffer, i: number): number {
  let depth = 0;
  for (;;) {
    // A value starts here.
    let c = b[i];
    if (c === LBRACE) {
      i = ws(b, i + 1);
      if (b[i] === RBRACE) i += 1;
      else {
        if (depth === MAX_DEPTH) return -1;
        stack[depth++] = 1;
        i = key(b, i);
        if (i < 0) return -1;
        continue;
      }
    } else if (c === LBRACKET) {
      i = ws(b, i + 1);
      if (b[i] === RBRACKET) i += 1;
      else {
        if (depth === MAX_DEPTH) return -1;
        stack[depth++] = 2;
        continue;
      }
    } else if (c === QUOTE) {
      i = scanString(b, i + 1);
      if (i < 0) return -1;
    } else {
      i = skipPrimitive(b, i);
      if (i < 0) return -1;
    }
    // A value ended: close containers until the next value starts.
    for (;;) {
      if (depth === 0) return i;
      i = ws(b, i);
      c = b[i];
      const inObject = stack[depth - 1] === 1;
      if (c === COMMA) {
        i = ws(b, i + 1);
        if (inObject) {
          i = key(b, i);
          if (i < 0) return -1;
        }
        break;
      }
      if (c === (inObject ? RBRACE : RBRACKET)) {
        depth -= 1;
        i += 1;
        continue;
      }
      return -1;
    }
  }
}

/** Skips `"key" :` and the whitespace after it; returns where the value starts, or -1. */
function key(b: Buffer, i: number): number {
  if (b[i] !== QUOTE) return -1;
  i = scanString(b, i + 1);
  if (i < 0) return -1;
  i = ws(b, i);
  if (b[i] !== COLON) return -1;
  return ws(b, i + 1);
}
