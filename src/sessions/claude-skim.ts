/**
 * Counting a Claude Code transcript needs a few fields of each line, not its long
 * texts. The wasm reader (json-scan.ts) validates the line as JSON and locates those
 * fields (`skimClaudeSlots`, or JsonScanner.skimRecordAt in ClaudeParser); the `slot…`
 * functions read them (`useSlotsOf` picks the scanner). `skimClaudeLine` gives the
 * same fields as an object. Pure.
 *
 * That object has the shape `JSON.parse` would give for the fields ClaudeParser reads
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

import { BLOCK_SLOTS, CLAUDE_FIELD_SLOTS, JsonScanner, SKIM_OK } from './json-scan.js';

export const SKIPPED: readonly never[] = Object.freeze([]);

/**
 * `uuid`, `parentUuid`, `message.id` and `timestamp` hold this when the value is a plain
 * string of the line: it is then at [uuidAt, uuidEnd), [parentAt, parentEnd), [idAt, idEnd),
 * [timestampAt, timestampEnd) of the line's bytes and was not decoded
 * (the parser keys ids and compares timestamps by their bytes).
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
  timestampAt: number;
  timestampEnd: number;
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
  forkedFrom?: unknown;
}

// Classes with every field present: one hidden class each, so field stores stay monomorphic.
class Top implements SkimmedRecord {
  timestampAt = -1;
  timestampEnd = -1;
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
  forkedFrom: unknown = undefined;
}
class Message implements SkimmedMessage {
  idAt = -1;
  idEnd = -1;
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

/** Raw bytes of a text kept before it is cut: ≥ 340 UTF-16 units even if all are `\uXXXX` escapes. */
const TEXT_HEAD_BYTES = 2048;
const BACKSLASH = 0x5c;

// Slots of wasm/claude-fields.ts.
const TYPE = 0;
const SESSION_ID = 1;
const CWD = 2;
const VERSION = 3;
const UUID = 4;
const PARENT_UUID = 5;
const TIMESTAMP = 6;
const AGENT_ID = 7;
const IS_SIDECHAIN = 8;
const IS_API_ERROR = 9;
const IS_COMPACT_SUMMARY = 10;
const IS_META = 11;
const SUBTYPE = 12;
const LOGICAL_PARENT = 13;
const COMPACT_METADATA = 14;
const MICROCOMPACT_METADATA = 15;
const MESSAGE = 16;
const FORKED_FROM = 17;
const MODEL = 18;
const MESSAGE_ID = 19;
const USAGE = 20;
const CONTENT = 21;
const INPUT_TOKENS = 22;
const OUTPUT_TOKENS = 23;
const CACHE_READ = 24;
const CACHE_CREATION = 25;
// Value kinds.
const ABSENT = 0;
const STRING = 1;
const ESCAPED_STRING = 2;
const NUMBER = 3;
const TRUE = 4;
const FALSE = 5;
const NULL = 6;
const OBJECT = 7;
const ARRAY = 8;

/** Created on first use; undefined where WebAssembly is not available (every line then goes to JSON.parse). */
let scanner: JsonScanner | undefined | null = null;
let f: Int32Array = new Int32Array(0);

/**
 * Reads `b` with the wasm reader; true when its slots (read with the `slot…` functions
 * below, valid until the next call) describe the line exactly. ClaudeParser reads the
 * slots directly; `skimClaudeLine` builds the JSON.parse-shaped view of them.
 */
export function skimClaudeSlots(b: Buffer): boolean {
  if (scanner === null) scanner = JsonScanner.create();
  if (scanner === undefined || scanner.skimClaude(b) !== SKIM_OK) return false;
  f = scanner.fields;
  return true;
}

/** Makes the slot functions read the slots `own` wrote last (its `skimRecord…` calls skim too). */
export function useSlotsOf(own: JsonScanner): void {
  f = own.fields;
}

export const SLOT = {
  TYPE,
  SESSION_ID,
  CWD,
  VERSION,
  UUID,
  PARENT_UUID,
  TIMESTAMP,
  AGENT_ID,
  IS_SIDECHAIN,
  IS_API_ERROR,
  IS_COMPACT_SUMMARY,
  IS_META,
  SUBTYPE,
  LOGICAL_PARENT,
  COMPACT_METADATA,
  MICROCOMPACT_METADATA,
  MESSAGE,
  FORKED_FROM,
  MODEL,
  MESSAGE_ID,
  USAGE,
  CONTENT,
  INPUT_TOKENS,
  OUTPUT_TOKENS,
  CACHE_READ,
  CACHE_CREATION,
} as const;

export const KIND = { ABSENT, STRING, ESCAPED_STRING, NUMBER, TRUE, FALSE, NULL, OBJECT, ARRAY } as const;

/** String-cache slots of `slotCached` (a field's last string is reused while its bytes repeat). */
export const CACHE = { TYPE: 0, SESSION_ID: 1, CWD: 2, VERSION: 3, AGENT_ID: 4, SUBTYPE: 5, MODEL: 6, BLOCK_TYPE: 8, BLOCK_NAME: 9 } as const;

export function slotKind(slot: number): number {
  return f[slot * 3]!;
}

export function slotStart(slot: number): number {
  return f[slot * 3 + 1]!;
}

export function slotEnd(slot: number): number {
  return f[slot * 3 + 2]!;
}

/** The value as JSON.parse gives it, except that objects and arrays become SKIPPED. */
export function slotValue(b: Buffer, slot: number): unknown {
  return plain(b, slot);
}

/** A string value, or undefined for any other kind. */
export function slotString(b: Buffer, slot: number): string | undefined {
  const kind = f[slot * 3];
  return kind === STRING || kind === ESCAPED_STRING ? (plain(b, slot) as string) : undefined;
}

/** Like slotString, reusing the last string of `cacheSlot` while the bytes repeat. */
export function slotCached(b: Buffer, slot: number, cacheSlot: number): string | undefined {
  const kind = f[slot * 3];
  return kind === STRING || kind === ESCAPED_STRING ? (cached(b, slot, cacheSlot) as string) : undefined;
}

/** A string value with long strings cut to a head (see the module comment); undefined for other kinds. */
export function slotText(b: Buffer, slot: number): string | undefined {
  const kind = f[slot * 3];
  return kind === STRING || kind === ESCAPED_STRING ? (text(b, slot) as string) : undefined;
}

/** An object or array value as JSON.parse gives it (for rare fields). */
export function slotParsed(b: Buffer, slot: number): unknown {
  return parseSlot(b, slot);
}

export function blockCount(): number {
  return f[CLAUDE_FIELD_SLOTS * 3]!;
}

/** The first slot of block k (the item itself); then type, name, id, text. */
export function blockSlot(k: number): number {
  return CLAUDE_FIELD_SLOTS + 1 + k * BLOCK_SLOTS;
}

export function skimClaudeLine(b: Buffer): SkimmedRecord | undefined {
  if (!skimClaudeSlots(b)) return undefined;
  const out = new Top();
  if (f[TYPE * 3] !== ABSENT) out.type = cached(b, TYPE, 0);
  if (f[SESSION_ID * 3] !== ABSENT) out.sessionId = cached(b, SESSION_ID, 1);
  if (f[CWD * 3] !== ABSENT) out.cwd = cached(b, CWD, 2);
  if (f[VERSION * 3] !== ABSENT) out.version = cached(b, VERSION, 3);
  if (f[UUID * 3] === STRING) {
    out.uuid = IN_LINE;
    out.uuidAt = f[UUID * 3 + 1]!;
    out.uuidEnd = f[UUID * 3 + 2]!;
  } else out.uuid = plain(b, UUID);
  if (f[PARENT_UUID * 3] === STRING) {
    out.parentUuid = IN_LINE;
    out.parentAt = f[PARENT_UUID * 3 + 1]!;
    out.parentEnd = f[PARENT_UUID * 3 + 2]!;
  } else out.parentUuid = plain(b, PARENT_UUID);
  if (f[TIMESTAMP * 3] === STRING) {
    out.timestamp = IN_LINE;
    out.timestampAt = f[TIMESTAMP * 3 + 1]!;
    out.timestampEnd = f[TIMESTAMP * 3 + 2]!;
  } else out.timestamp = plain(b, TIMESTAMP);
  if (f[AGENT_ID * 3] !== ABSENT) out.agentId = cached(b, AGENT_ID, 4);
  out.isSidechain = plain(b, IS_SIDECHAIN);
  out.isApiErrorMessage = plain(b, IS_API_ERROR);
  out.isCompactSummary = plain(b, IS_COMPACT_SUMMARY);
  out.isMeta = plain(b, IS_META);
  if (f[SUBTYPE * 3] !== ABSENT) out.subtype = cached(b, SUBTYPE, 5);
  out.logicalParentUuid = plain(b, LOGICAL_PARENT);
  // Only on compaction lines (rare): the object as JSON.parse gives it.
  out.compactMetadata = f[COMPACT_METADATA * 3] === OBJECT ? parseSlot(b, COMPACT_METADATA) : plain(b, COMPACT_METADATA);
  out.microcompactMetadata = f[MICROCOMPACT_METADATA * 3] === OBJECT ? parseSlot(b, MICROCOMPACT_METADATA) : plain(b, MICROCOMPACT_METADATA);
  // Counting never looks at assistant texts (ClaudeParser.readMessage): they are not decoded.
  // Only on the first line of a forked session.
  out.forkedFrom = f[FORKED_FROM * 3] === OBJECT ? parseSlot(b, FORKED_FROM) : plain(b, FORKED_FROM);
  if (f[MESSAGE * 3] === OBJECT) out.message = message(b, out.type !== 'assistant');
  else out.message = plain(b, MESSAGE);
  return out;
}

function message(b: Buffer, readTexts: boolean): SkimmedMessage {
  const m = new Message();
  if (f[MODEL * 3] !== ABSENT) m.model = cached(b, MODEL, 6);
  if (f[MESSAGE_ID * 3] === STRING) {
    m.id = IN_LINE;
    m.idAt = f[MESSAGE_ID * 3 + 1]!;
    m.idEnd = f[MESSAGE_ID * 3 + 2]!;
  } else m.id = plain(b, MESSAGE_ID);
  if (f[USAGE * 3] === OBJECT) {
    const usage = new Usage();
    usage.input_tokens = plain(b, INPUT_TOKENS);
    usage.output_tokens = plain(b, OUTPUT_TOKENS);
    usage.cache_read_input_tokens = plain(b, CACHE_READ);
    usage.cache_creation_input_tokens = plain(b, CACHE_CREATION);
    m.usage = usage;
  } else m.usage = plain(b, USAGE);
  const contentKind = f[CONTENT * 3];
  if (contentKind === ARRAY) {
    const count = f[CLAUDE_FIELD_SLOTS * 3]!;
    const blocks: Array<SkimmedBlock | null> = [];
    for (let k = 0; k < count; k += 1) {
      const slot = CLAUDE_FIELD_SLOTS + 1 + k * BLOCK_SLOTS;
      if (f[slot * 3] !== OBJECT) {
        // JSON.parse gives the value; the parser skips every item that is not an object.
        blocks.push(null);
        continue;
      }
      const block = new BlockFields();
      if (f[(slot + 1) * 3] !== ABSENT) block.type = cached(b, slot + 1, 8);
      if (f[(slot + 2) * 3] !== ABSENT) block.name = cached(b, slot + 2, 9);
      block.id = plain(b, slot + 3);
      block.text = readTexts ? text(b, slot + 4) : UNREAD;
      blocks.push(block);
    }
    m.content = blocks;
  } else m.content = readTexts ? text(b, CONTENT) : UNREAD;
  return m;
}

/** Stands for an assistant text that was not decoded. */
const UNREAD = '';

/** The value in `slot` as JSON.parse gives it, except that objects and arrays become SKIPPED. */
function plain(b: Buffer, slot: number): unknown {
  const at = slot * 3;
  switch (f[at]) {
    case ABSENT:
      return undefined;
    case STRING:
      return b.toString('utf8', f[at + 1], f[at + 2]);
    case ESCAPED_STRING:
      return JSON.parse(b.toString('utf8', f[at + 1]! - 1, f[at + 2]! + 1)) as string;
    case NUMBER:
      return number(b, f[at + 1]!, f[at + 2]!);
    case TRUE:
      return true;
    case FALSE:
      return false;
    case NULL:
      return null;
    default:
      return SKIPPED;
  }
}

function parseSlot(b: Buffer, slot: number): unknown {
  return JSON.parse(b.toString('utf8', f[slot * 3 + 1], f[slot * 3 + 2]));
}

/** A JSON number (its grammar was checked): small integers without a detour through a string. */
function number(b: Buffer, from: number, to: number): number {
  if (to - from <= 15) {
    let value = 0;
    let i = from;
    for (; i < to; i += 1) {
      const d = b[i]! - 0x30;
      if (d < 0 || d > 9) break;
      value = value * 10 + d;
    }
    // "0" alone, or digits without a leading zero: exact as an integer below 2^53.
    if (i === to && (b[from] !== 0x30 || to - from === 1)) return value;
  }
  return Number(b.toString('latin1', from, to));
}

/**
 * Most lines repeat a few values of the type, session id, cwd, version, model, block type
 * and tool name fields: each field keeps its last few strings and reuses one when the bytes
 * are the same (comparing short bytes is cheaper than decoding).
 */
const CACHE_SLOTS = 10;
const CACHE_WAYS = 4;
const CACHE_BYTES = 96;
const cacheBytes = Buffer.alloc(CACHE_SLOTS * CACHE_WAYS * CACHE_BYTES);
const cacheLength = new Int32Array(CACHE_SLOTS * CACHE_WAYS).fill(-1);
const cacheValue: string[] = new Array<string>(CACHE_SLOTS * CACHE_WAYS).fill('');
const cacheNext = new Uint8Array(CACHE_SLOTS);

function cached(b: Buffer, slot: number, cacheSlot: number): unknown {
  const at = slot * 3;
  if (f[at] !== STRING) return plain(b, slot);
  const from = f[at + 1]!;
  const length = f[at + 2]! - from;
  if (length > CACHE_BYTES) return b.toString('utf8', from, from + length);
  const first = cacheSlot * CACHE_WAYS;
  for (let way = first; way < first + CACHE_WAYS; way += 1) {
    if (cacheLength[way] !== length) continue;
    const base = way * CACHE_BYTES;
    let k = 0;
    while (k < length && cacheBytes[base + k] === b[from + k]) k += 1;
    if (k === length) return cacheValue[way];
  }
  const value = b.toString('utf8', from, from + length);
  const way = first + cacheNext[cacheSlot]!;
  cacheNext[cacheSlot] = (cacheNext[cacheSlot]! + 1) % CACHE_WAYS;
  const base = way * CACHE_BYTES;
  for (let k = 0; k < length; k += 1) cacheBytes[base + k] = b[from + k]!;
  cacheLength[way] = length;
  cacheValue[way] = value;
  return value;
}

/** Like `plain`, but a long string keeps only its head (see the module comment). */
function text(b: Buffer, slot: number): unknown {
  const kind = f[slot * 3];
  if (kind !== STRING && kind !== ESCAPED_STRING) return plain(b, slot);
  const from = f[slot * 3 + 1]!;
  const to = f[slot * 3 + 2]!;
  const hasEscape = kind === ESCAPED_STRING;
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
  const head = decode(b, from, cut, hasEscape);
  return head.trim() === '' ? decode(b, from, to, hasEscape) : head;
}

function decode(b: Buffer, from: number, to: number, hasEscape: boolean): string {
  if (!hasEscape) return b.toString('utf8', from, to);
  return JSON.parse(`"${b.toString('utf8', from, to)}"`) as string;
}
