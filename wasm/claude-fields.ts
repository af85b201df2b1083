// AssemblyScript, compiled to WebAssembly by tools/build-wasm.mjs (not part of the TypeScript build).
//
// Stage two of reading a Claude Code line when only counting: walks the whole line as
// JSON (full grammar: objects, arrays, numbers, literals, whitespace), using the string
// delimiters found by stage one to jump over strings, and records where the fields
// ClaudeParser reads are. Nothing is decoded here; the caller decodes the few values
// it needs. Anything this reader cannot answer exactly (a needed key twice or spelled
// with an escape, too deep, too many blocks) returns UNSURE and the caller uses JSON.parse.
//
// Output: slots of three i32 (kind, start, end) at `out`; strings are given without their
// quotes. Slots 0..FIELD_COUNT-1 are the fields; slot FIELD_COUNT holds the number of
// content blocks (in its first i32); then each block has BLOCK_SLOTS slots: the item itself,
// then its type, name, id and text.

import { idCount, idEquals, idFindNear, idFindOrAdd, ID_NO_MEMORY, tablesAlloc } from './id-table';
import { scanQuotes } from './json-quotes';

export { heapBase, scanQuotes } from './json-quotes';
export { idCount, idEquals, idFind, idFindOrAdd, idTableNew, idText, idTextAt, tablesAlloc, tablesInit } from './id-table';
export const FIELD_SLOTS: i32 = 26;

export const OK: i32 = 1;
export const UNSURE: i32 = 0;
export const NOT_JSON: i32 = -1;

// Value kinds.
const ABSENT: i32 = 0;
const STRING: i32 = 1;
const ESCAPED_STRING: i32 = 2;
const NUMBER: i32 = 3;
const TRUE: i32 = 4;
const FALSE: i32 = 5;
const NULL: i32 = 6;
const OBJECT: i32 = 7;
const ARRAY: i32 = 8;

// Slots: the top-level keys, then message.*, then message.usage.*.
const UUID_SLOT: i32 = 4;
const PARENT_SLOT: i32 = 5;
const TIMESTAMP_SLOT: i32 = 6;
const MESSAGE_ID_SLOT: i32 = 19;
const MESSAGE_SLOT: i32 = 16;
const FIRST_MESSAGE_SLOT: i32 = 18;
const USAGE_SLOT: i32 = 20;
const CONTENT_SLOT: i32 = 21;
const FIRST_USAGE_SLOT: i32 = 22;
const FIELD_COUNT: i32 = 26;
const BLOCK_SLOTS: i32 = 5;
const MAX_BLOCKS: i32 = 256;
const MAX_DEPTH: i32 = 512;

// The keys read (their slot is the first slot of their object plus their index here):
// top level: type sessionId cwd version uuid parentUuid timestamp agentId isSidechain
//   isApiErrorMessage isCompactSummary isMeta subtype logicalParentUuid compactMetadata
//   microcompactMetadata message forkedFrom;
// message: model id usage content; usage: input_tokens output_tokens cache_read_input_tokens
//   cache_creation_input_tokens; content block: type name id text. See topKey and the others.

const HAS_ESCAPE: u32 = 0x80000000;

// State of the line being read.
let line: usize = 0;
let length: i32 = 0;
let quotes: usize = 0;
let quoteCount: i32 = 0;
let nextQuote: i32 = 0;
let out: usize = 0;
// The last string read: content range and whether it holds an escape.
let stringStart: i32 = 0;
let stringEnd: i32 = 0;
let stringEscaped = false;
// Set when the line is valid JSON but cannot be read exactly here.
let unsure = false;
let blockCount: i32 = 0;
// Added to every position written (the line's place in the caller's buffer).
let shift: i32 = 0;

@inline function byte(i: i32): u32 {
  return <u32>load<u8>(line + <usize>i);
}

@inline function ws(i: i32): i32 {
  while (i < length) {
    const c = byte(i);
    if (c != 0x20 && c != 0x09 && c != 0x0a && c != 0x0d) break;
    i++;
  }
  return i;
}

/** The string opening at i: the next pair of delimiters. Returns the index after it, or -1. */
function readString(i: i32): i32 {
  const k = nextQuote;
  if (k + 1 >= quoteCount || load<u32>(quotes + (<usize>k << 2)) != <u32>i) return -1;
  const close = load<u32>(quotes + (<usize>(k + 1) << 2));
  nextQuote = k + 2;
  stringStart = i + 1;
  stringEnd = <i32>(close & ~HAS_ESCAPE);
  stringEscaped = (close & HAS_ESCAPE) != 0;
  return stringEnd + 1;
}

@inline function isDigit(c: u32): bool {
  return c - 0x30 < 10;
}

/** End of the number or literal at i, or -1 (JSON grammar). */
function readPrimitive(i: i32): i32 {
  const c = byte(i);
  if (c == 0x74) return i + 3 < length && byte(i + 1) == 0x72 && byte(i + 2) == 0x75 && byte(i + 3) == 0x65 ? i + 4 : -1;
  if (c == 0x66) return i + 4 < length && byte(i + 1) == 0x61 && byte(i + 2) == 0x6c && byte(i + 3) == 0x73 && byte(i + 4) == 0x65 ? i + 5 : -1;
  if (c == 0x6e) return i + 3 < length && byte(i + 1) == 0x75 && byte(i + 2) == 0x6c && byte(i + 3) == 0x6c ? i + 4 : -1;
  let j = i;
  if (j < length && byte(j) == 0x2d) j++;
  if (j >= length) return -1;
  if (byte(j) == 0x30) j++;
  else if (isDigit(byte(j))) {
    while (j < length && isDigit(byte(j))) j++;
  } else return -1;
  if (j < length && byte(j) == 0x2e) {
    j++;
    if (j >= length || !isDigit(byte(j))) return -1;
    while (j < length && isDigit(byte(j))) j++;
  }
  if (j < length && (byte(j) | 0x20) == 0x65) {
    j++;
    if (j < length && (byte(j) == 0x2b || byte(j) == 0x2d)) j++;
    if (j >= length || !isDigit(byte(j))) return -1;
    while (j < length && isDigit(byte(j))) j++;
  }
  return j;
}

function kindAt(i: i32): i32 {
  const c = byte(i);
  if (c == 0x22) return STRING;
  if (c == 0x7b) return OBJECT;
  if (c == 0x5b) return ARRAY;
  if (c == 0x74) return TRUE;
  if (c == 0x66) return FALSE;
  if (c == 0x6e) return NULL;
  return NUMBER;
}

/** Validates the value at i and returns the index after it, or -1. */
function skipValue(i: i32, depth: i32): i32 {
  if (i >= length) return -1;
  const c = byte(i);
  if (c == 0x22) return readString(i);
  if (c == 0x7b || c == 0x5b) {
    if (depth >= MAX_DEPTH) {
      unsure = true;
      return -1;
    }
    const close: u32 = c == 0x7b ? 0x7d : 0x5d;
    i = ws(i + 1);
    if (i < length && byte(i) == close) return i + 1;
    for (;;) {
      if (c == 0x7b) {
        if (i >= length || byte(i) != 0x22) return -1;
        i = readString(i);
        if (i < 0) return -1;
        i = ws(i);
        if (i >= length || byte(i) != 0x3a) return -1;
        i = ws(i + 1);
      }
      i = skipValue(i, depth + 1);
      if (i < 0) return -1;
      i = ws(i);
      if (i >= length) return -1;
      const d = byte(i);
      if (d == 0x2c) {
        i = ws(i + 1);
        continue;
      }
      return d == close ? i + 1 : -1;
    }
  }
  return readPrimitive(i);
}

@inline function slotAddress(slot: i32): usize {
  return out + <usize>(slot * 12);
}

/** Validates the value at i, records its kind and extent in `slot`, returns the index after it or -1. */
function recordValue(i: i32, slot: i32, depth: i32): i32 {
  if (i >= length) return -1;
  const kind = kindAt(i);
  const end = skipValue(i, depth);
  if (end < 0) return -1;
  const at = slotAddress(slot);
  if (kind == STRING) {
    store<i32>(at, stringEscaped ? ESCAPED_STRING : STRING);
    store<i32>(at, stringStart + shift, 4);
    store<i32>(at, stringEnd + shift, 8);
  } else {
    store<i32>(at, kind);
    store<i32>(at, i + shift, 4);
    store<i32>(at, end + shift, 8);
  }
  return end;
}

/** Whether the last string read spells `key` (its length already matched). */
@inline function spells(key: string): bool {
  return spellsAt(line + <usize>stringStart, key);
}

/** Whether the bytes at p spell the ASCII `text` (as many bytes as it has chars). */
function spellsAt(p: usize, text: string): bool {
  const n = text.length;
  for (let j = 0; j < n; j++) if (<u32>text.charCodeAt(j) != <u32>load<u8>(p + <usize>j)) return false;
  return true;
}

/** Index in TOP_KEYS of the key spelled by the last string read, or -1 (most keys of a line are not wanted: by length first). */
function topKey(): i32 {
  switch (stringEnd - stringStart) {
    case 3:
      return spells('cwd') ? 2 : -1;
    case 4:
      return spells('type') ? 0 : spells('uuid') ? 4 : -1;
    case 6:
      return spells('isMeta') ? 11 : -1;
    case 7:
      return spells('version') ? 3 : spells('agentId') ? 7 : spells('subtype') ? 12 : spells('message') ? 16 : -1;
    case 9:
      return spells('sessionId') ? 1 : spells('timestamp') ? 6 : -1;
    case 10:
      return spells('parentUuid') ? 5 : spells('forkedFrom') ? 17 : -1;
    case 11:
      return spells('isSidechain') ? 8 : -1;
    case 15:
      return spells('compactMetadata') ? 14 : -1;
    case 16:
      return spells('isCompactSummary') ? 10 : -1;
    case 17:
      return spells('isApiErrorMessage') ? 9 : spells('logicalParentUuid') ? 13 : -1;
    case 20:
      return spells('microcompactMetadata') ? 15 : -1;
    default:
      return -1;
  }
}

function messageKey(): i32 {
  switch (stringEnd - stringStart) {
    case 2:
      return spells('id') ? 1 : -1;
    case 5:
      return spells('model') ? 0 : spells('usage') ? 2 : -1;
    case 7:
      return spells('content') ? 3 : -1;
    default:
      return -1;
  }
}

function usageKey(): i32 {
  switch (stringEnd - stringStart) {
    case 12:
      return spells('input_tokens') ? 0 : -1;
    case 13:
      return spells('output_tokens') ? 1 : -1;
    case 23:
      return spells('cache_read_input_tokens') ? 2 : -1;
    case 27:
      return spells('cache_creation_input_tokens') ? 3 : -1;
    default:
      return -1;
  }
}

function blockKey(): i32 {
  switch (stringEnd - stringStart) {
    case 2:
      return spells('id') ? 2 : -1;
    case 4:
      return spells('type') ? 0 : spells('name') ? 1 : spells('text') ? 3 : -1;
    default:
      return -1;
  }
}

// Which object a member belongs to.
const IN_TOP: i32 = 0;
const IN_MESSAGE: i32 = 1;
const IN_USAGE: i32 = 2;
const IN_BLOCK: i32 = 3;

/** Reads the object at i (byte(i) == '{'), recording the keys of `where`. Returns the index after it or -1. */
function readObject(i: i32, where: i32, firstSlot: i32, depth: i32): i32 {
  if (depth >= MAX_DEPTH) {
    unsure = true;
    return -1;
  }
  i = ws(i + 1);
  if (i < length && byte(i) == 0x7d) return i + 1;
  for (;;) {
    if (i >= length || byte(i) != 0x22) return -1;
    i = readString(i);
    if (i < 0) return -1;
    // JSON.parse would decode an escaped key: it might name a needed field.
    if (stringEscaped) {
      unsure = true;
      return -1;
    }
    const k = where == IN_TOP ? topKey() : where == IN_MESSAGE ? messageKey() : where == IN_USAGE ? usageKey() : blockKey();
    i = ws(i);
    if (i >= length || byte(i) != 0x3a) return -1;
    i = ws(i + 1);
    if (i >= length) return -1;
    if (k < 0) {
      i = skipValue(i, depth + 1);
    } else {
      const slot = firstSlot + k;
      // A needed key twice: JSON.parse keeps the last; leave that to it.
      if (load<i32>(slotAddress(slot)) != ABSENT) {
        unsure = true;
        return -1;
      }
      const c = byte(i);
      if (where == IN_TOP && slot == MESSAGE_SLOT && c == 0x7b) {
        i = recordObject(i, slot, IN_MESSAGE, FIRST_MESSAGE_SLOT, depth + 1);
      } else if (where == IN_MESSAGE && slot == USAGE_SLOT && c == 0x7b) {
        i = recordObject(i, slot, IN_USAGE, FIRST_USAGE_SLOT, depth + 1);
      } else if (where == IN_MESSAGE && slot == CONTENT_SLOT && c == 0x5b) {
        i = readBlocks(i, depth + 1);
      } else {
        i = recordValue(i, slot, depth + 1);
      }
    }
    if (i < 0) return -1;
    i = ws(i);
    if (i >= length) return -1;
    const d = byte(i);
    if (d == 0x2c) {
      i = ws(i + 1);
      continue;
    }
    return d == 0x7d ? i + 1 : -1;
  }
}

function recordObject(i: i32, slot: i32, where: i32, firstSlot: i32, depth: i32): i32 {
  const end = readObject(i, where, firstSlot, depth);
  if (end < 0) return -1;
  const at = slotAddress(slot);
  store<i32>(at, OBJECT);
  store<i32>(at, i + shift, 4);
  store<i32>(at, end + shift, 8);
  return end;
}

/** message.content as an array: each object item is a block with its own slots. */
function readBlocks(i: i32, depth: i32): i32 {
  const start = i;
  i = ws(i + 1);
  if (i < length && byte(i) == 0x5d) {
    i += 1;
  } else {
    for (;;) {
      if (blockCount == MAX_BLOCKS) {
        unsure = true;
        return -1;
      }
      const blockSlot = FIELD_COUNT + 1 + blockCount * BLOCK_SLOTS;
      // Slots of a block are zeroed as it is met (a line has few).
      for (let s = 0; s < BLOCK_SLOTS; s++) {
        const at = slotAddress(blockSlot + s);
        store<i32>(at, ABSENT);
        store<i32>(at, 0, 4);
        store<i32>(at, 0, 8);
      }
      blockCount++;
      if (i < length && byte(i) == 0x7b) i = recordObject(i, blockSlot, IN_BLOCK, blockSlot + 1, depth + 1);
      else i = recordValue(i, blockSlot, depth + 1);
      if (i < 0) return -1;
      i = ws(i);
      if (i >= length) return -1;
      const d = byte(i);
      if (d == 0x2c) {
        i = ws(i + 1);
        continue;
      }
      if (d != 0x5d) return -1;
      i += 1;
      break;
    }
  }
  const at = slotAddress(CONTENT_SLOT);
  store<i32>(at, ARRAY);
  store<i32>(at, start + shift, 4);
  store<i32>(at, i + shift, 8);
  return i;
}

/**
 * Reads the line at [src, src + len) (64 readable bytes after it) and writes its positions
 * plus `offset`; `quoteArea` has room
 * for len + 64 positions, `output` for the slots and MAX_BLOCKS blocks. OK, UNSURE or NOT_JSON.
 */
export function skimClaude(src: usize, len: i32, quoteArea: usize, output: usize, offset: i32): i32 {
  const count = scanQuotes(src, len, quoteArea);
  shift = offset;
  if (count < 0) return NOT_JSON;
  line = src;
  length = len;
  quotes = quoteArea;
  quoteCount = count;
  nextQuote = 0;
  out = output;
  unsure = false;
  blockCount = 0;
  memory.fill(output, 0, <usize>((FIELD_COUNT + 1) * 12));
  let i = ws(0);
  if (i >= length || byte(i) != 0x7b) return i < length ? UNSURE : NOT_JSON;
  i = readObject(i, IN_TOP, 0, 0);
  if (i < 0) return unsure ? UNSURE : NOT_JSON;
  store<i32>(slotAddress(FIELD_COUNT), blockCount);
  return ws(i) == length && nextQuote == quoteCount ? OK : NOT_JSON;
}

// Linking a record read by skimClaude (see linkRecord).
export const LINK_BY_CALLER: i32 = 0;
export const LINK_ADDED: i32 = 1;
export const LINK_DUPLICATE: i32 = 2;
export const PARENT_ROOT: i32 = -1;
export const PARENT_UNRESOLVED: i32 = -3;
export const PARENT_BY_CALLER: i32 = -4;
/** Set in the link flags when the caller must see the timestamp itself (escaped, non-ASCII or long). */
export const TIMESTAMP_BY_CALLER: i32 = 1;
/** Set when the message id is an escaped string (the caller numbers it). */
export const MESSAGE_ID_BY_CALLER: i32 = 2;
/** Where linkRecord writes: after the slots and blocks (three i32: parent, message number, flags). */
export const LINK_AREA: i32 = (FIELD_COUNT + 1 + MAX_BLOCKS * BLOCK_SLOTS) * 12;

// Link state (one per reader): the earliest and latest timestamp seen, as bytes (length + 1 at 0
// and 4; 0: none), and the last message number + 1 (at 8).
const BOUND_BYTES: i32 = 64;
const FIRST_BOUND: usize = 16;
const LAST_BOUND: usize = 16 + <usize>BOUND_BYTES;

/** A new link state (see linkRecord); 0 when there is no memory. */
export function linkStateNew(): usize {
  return tablesAlloc(16 + 2 * <usize>BOUND_BYTES);
}

/** The kept timestamp of `state` (0: earliest, 1: latest): its length, -1 when none; its bytes are at linkBoundAt. */
export function linkBoundLength(state: usize, which: i32): i32 {
  return load<i32>(state + (which == 0 ? 0 : 4)) - 1;
}

export function linkBoundAt(state: usize, which: i32): usize {
  return state + (which == 0 ? FIRST_BOUND : LAST_BOUND);
}

@inline function slotKind(slot: i32): i32 {
  return load<i32>(slotAddress(slot));
}

/** Address of a string slot's first byte (slot positions carry `shift`). */
@inline function slotPointer(slot: i32): usize {
  return line + <usize>(load<i32>(slotAddress(slot), 4) - shift);
}

@inline function slotLength(slot: i32): i32 {
  return load<i32>(slotAddress(slot), 8) - load<i32>(slotAddress(slot), 4);
}

/** Sign of (the ASCII bytes at [p, p + len)) compared with the bound at `at` (length `boundLength`). */
function compareBound(p: usize, len: i32, at: usize, boundLength: i32): i32 {
  const common = min(len, boundLength);
  const c = memory.compare(p, at, <usize>common);
  return c != 0 ? c : len - boundLength;
}

function keepBound(state: usize, which: usize, p: usize, len: i32): void {
  memory.copy(state + (which == 0 ? FIRST_BOUND : LAST_BOUND), p, <usize>len);
  store<i32>(state + (which == 0 ? 0 : 4), len + 1);
}

/** Whether the bytes at [p, p + len) are all ASCII. */
function ascii(p: usize, len: i32): bool {
  for (let k = 0; k < len; k++) if (load<u8>(p + <usize>k) >= 0x80) return false;
  return true;
}

/** Tracks the earliest and latest timestamp (ASCII ones up to BOUND_BYTES; false: the caller must see it). */
function seeTimestamp(state: usize): bool {
  const p = slotPointer(TIMESTAMP_SLOT);
  const len = slotLength(TIMESTAMP_SLOT);
  if (len > BOUND_BYTES || !ascii(p, len)) return false;
  const lastLength = load<i32>(state, 4) - 1;
  if (lastLength < 0) {
    keepBound(state, 0, p, len);
    keepBound(state, 1, p, len);
  } else if (compareBound(p, len, state + LAST_BOUND, lastLength) > 0) keepBound(state, 1, p, len);
  else if (compareBound(p, len, state + FIRST_BOUND, load<i32>(state) - 1) < 0) keepBound(state, 0, p, len);
  return true;
}

/** The number of the id at [p, p + len) in table `t` (added when new), trying the number noted (+ 1) at `last` first and noting it; ID_NO_MEMORY. */
function numberNear(t: usize, last: usize, p: usize, len: i32): i32 {
  const guess = load<i32>(last) - 1;
  if (guess >= 0 && idEquals(t, guess, p, len)) return guess;
  let number = idFindOrAdd(t, p, len);
  if (number == ID_NO_MEMORY) return ID_NO_MEMORY;
  if (number < 0) number = idCount(t) - 1;
  store<i32>(last, number + 1);
  return number;
}

/**
 * After skimClaude returned OK for a user, assistant, system, attachment or progress record:
 * adds its uuid to `uuids` and resolves its parent there, tracks its timestamp in `state`, and
 * (for an assistant record) numbers its message id in `messages`, as ClaudeParser does for a
 * parsed line. Returns LINK_BY_CALLER (the uuid is not a plain string: nothing was done),
 * LINK_DUPLICATE (the uuid was seen: nothing else was done), LINK_ADDED (the record is number
 * idCount(uuids) - 1; parent, message number and flags are at output + LINK_AREA) or ID_NO_MEMORY.
 */
export function linkRecord(state: usize, uuids: usize, messages: usize, assistant: bool): i32 {
  if (slotKind(UUID_SLOT) != STRING) return LINK_BY_CALLER;
  const found = idFindOrAdd(uuids, slotPointer(UUID_SLOT), slotLength(UUID_SLOT));
  if (found == ID_NO_MEMORY) return ID_NO_MEMORY;
  if (found >= 0) return LINK_DUPLICATE;
  const parentKind = slotKind(PARENT_SLOT);
  let parent = PARENT_ROOT;
  if (parentKind == STRING) {
    // Most records follow their parent.
    parent = idFindNear(uuids, slotPointer(PARENT_SLOT), slotLength(PARENT_SLOT), idCount(uuids) - 2);
    if (parent < 0) parent = PARENT_UNRESOLVED;
  } else if (parentKind == ESCAPED_STRING) parent = PARENT_BY_CALLER;
  let flags = 0;
  const timestampKind = slotKind(TIMESTAMP_SLOT);
  if (timestampKind == ESCAPED_STRING || (timestampKind == STRING && !seeTimestamp(state))) flags |= TIMESTAMP_BY_CALLER;
  let message = -1;
  if (assistant) {
    const idKind = slotKind(MESSAGE_ID_SLOT);
    if (idKind == STRING) {
      // The lines of one API message follow each other: most ids are the last one's.
      message = numberNear(messages, state + 8, slotPointer(MESSAGE_ID_SLOT), slotLength(MESSAGE_ID_SLOT));
      if (message == ID_NO_MEMORY) return ID_NO_MEMORY;
    } else if (idKind == ESCAPED_STRING) flags |= MESSAGE_ID_BY_CALLER;
  }
  const at = out + <usize>LINK_AREA;
  store<i32>(at, parent);
  store<i32>(at, message, 4);
  store<i32>(at, flags, 8);
  return LINK_ADDED;
}

// Reading a whole record (see readRecord).
const SESSION_ID_SLOT: i32 = 1;
const CWD_SLOT: i32 = 2;
const VERSION_SLOT: i32 = 3;
const AGENT_ID_SLOT: i32 = 7;
const IS_SIDECHAIN_SLOT: i32 = 8;
const IS_API_ERROR_SLOT: i32 = 9;
const IS_COMPACT_SUMMARY_SLOT: i32 = 10;
const IS_META_SLOT: i32 = 11;
const FORKED_FROM_SLOT: i32 = 17;
const MODEL_SLOT: i32 = 18;

// Context of readRecord (i32 fields): tables, link state, what the caller still needs, the last version seen.
export const CONTEXT_UUIDS: i32 = 0;
export const CONTEXT_MESSAGES: i32 = 4;
export const CONTEXT_MODELS: i32 = 8;
export const CONTEXT_TOOLS: i32 = 12;
export const CONTEXT_STATE: i32 = 16;
export const CONTEXT_FLAGS: i32 = 20;
/** Length + 1 of the version kept at CONTEXT_VERSION (0: none; the caller writes 0 when it sets the version itself). */
export const CONTEXT_VERSION_LENGTH: i32 = 24;
// The last model and tool numbers + 1 (most records repeat the one before).
const CONTEXT_LAST_MODEL: usize = 28;
const CONTEXT_LAST_TOOL: usize = 96;
const CONTEXT_VERSION: usize = 32;
const VERSION_BYTES: i32 = 64;
export const CONTEXT_BYTES: i32 = 32 + 64 + 16;
export const NEED_SUBAGENT: i32 = 1;
export const NEED_SESSION_ID: i32 = 2;
export const NEED_CWD: i32 = 4;
export const NEED_FORK: i32 = 8;

// Results of readRecord, i32 at output + LINK_AREA (after LINK_AREA's first three, which are linkRecord's).
export const RESULT_RECORD_FLAGS: i32 = 3;
export const RESULT_TYPE: i32 = 4;
export const RESULT_KIND: i32 = 5;
export const RESULT_STEPS: i32 = 6;
export const RESULT_MODEL: i32 = 7;
export const RESULT_TOOL: i32 = 8;
export const RESULT_USAGE: i32 = 9;
export const RESULT_INPUT: i32 = 10;
export const RESULT_OUTPUT: i32 = 11;
export const RESULT_CACHE_READ: i32 = 12;
export const RESULT_CACHE_CREATION: i32 = 13;
export const RESULT_COUNT: i32 = 14;
/** Link flag: the version differs from the one kept (the caller reads it). */
export const VERSION_CHANGED: i32 = 4;

// Record types, record flags and message kinds as in src/sessions/claude-records.ts.
const TYPE_USER: i32 = 1;
const TYPE_ASSISTANT: i32 = 2;
const TYPE_ATTACHMENT: i32 = 4;
const TYPE_PROGRESS: i32 = 5;
const SIDECHAIN: i32 = 1;
const SYNTHETIC: i32 = 2;
const TOOL_RESULT: i32 = 4;
const KIND_HUMAN: i32 = 1;
const KIND_INJECTED: i32 = 2;
const KIND_TOOL_RESULT: i32 = 3;
const KIND_COMPACTION_SUMMARY: i32 = 4;

/** Whether the string in `slot` spells `text` (ASCII). */
function slotSpells(slot: i32, text: string): bool {
  return slotLength(slot) == text.length && spellsAt(slotPointer(slot), text);
}

/** Code of the record type in the type slot; 0 for types left to the caller (system, meta, unknown, escaped). */
function typeCode(): i32 {
  if (slotKind(0) != STRING) return 0;
  switch (slotLength(0)) {
    case 4:
      return slotSpells(0, 'user') ? TYPE_USER : 0;
    case 9:
      return slotSpells(0, 'assistant') ? TYPE_ASSISTANT : 0;
    case 10:
      return slotSpells(0, 'attachment') ? TYPE_ATTACHMENT : 0;
    case 8:
      return slotSpells(0, 'progress') ? TYPE_PROGRESS : 0;
    default:
      return 0;
  }
}

@inline function isText(kind: i32): bool {
  return kind == STRING || kind == ESCAPED_STRING;
}

/** A token count as JSON.parse + num() would give it, or -1 when it is not a plain integer below 2^31 (the caller decides). */
function tokens(slot: i32): i32 {
  const kind = slotKind(slot);
  if (kind != NUMBER) return 0;
  const p = line + <usize>(load<i32>(slotAddress(slot), 4) - shift);
  const len = load<i32>(slotAddress(slot), 8) - load<i32>(slotAddress(slot), 4);
  if (len > 9) return -1;
  let value = 0;
  for (let k = 0; k < len; k++) {
    const digit = <u32>load<u8>(p + <usize>k) - 0x30;
    if (digit >= 10) return -1;
    value = value * 10 + <i32>digit;
  }
  return value;
}

// Block types read here.
const BLOCK_OTHER: i32 = 0;
const BLOCK_TEXT: i32 = 1;
const BLOCK_TOOL_USE: i32 = 2;
const BLOCK_TOOL_RESULT: i32 = 3;
const BLOCK_MEDIA: i32 = 4;
const BLOCK_UNSURE: i32 = 5;

function blockType(slot: i32): i32 {
  const kind = slotKind(slot);
  if (kind == ESCAPED_STRING) return BLOCK_UNSURE;
  if (kind != STRING) return BLOCK_OTHER;
  switch (slotLength(slot)) {
    case 4:
      return slotSpells(slot, 'text') ? BLOCK_TEXT : BLOCK_OTHER;
    case 5:
      return slotSpells(slot, 'image') ? BLOCK_MEDIA : BLOCK_OTHER;
    case 8:
      return slotSpells(slot, 'tool_use') ? BLOCK_TOOL_USE : slotSpells(slot, 'document') ? BLOCK_MEDIA : BLOCK_OTHER;
    case 11:
      return slotSpells(slot, 'tool_result') ? BLOCK_TOOL_RESULT : BLOCK_OTHER;
    case 15:
      return slotSpells(slot, 'server_tool_use') ? BLOCK_TOOL_USE : BLOCK_OTHER;
    default:
      return BLOCK_OTHER;
  }
}

const UNKNOWN_NAME = memory.data<u8>([0x75, 0x6e, 0x6b, 0x6e, 0x6f, 0x77, 0x6e]);

// What classifyText tells of a user text (as ClaudeParser with classify.ts: JavaScript trim(),
// isInjectedUserText and CLAUDE_SUMMARY_OPENING on its first 200 UTF-16 units).
const TEXT_PRESENT: i32 = 1;
const TEXT_INJECTED: i32 = 2;
const TEXT_SUMMARY: i32 = 4;
const FIRST_TEXT_UNITS: i32 = 200;
// Keep in step with CLAUDE_INJECTED_PREFIXES, CODEX_INJECTED_PREFIXES and CLAUDE_SUMMARY_OPENING in src/sessions/classify.ts
// (claude-skim.test.ts checks them against it).
const INJECTED_PREFIXES: string[] = [
  '<command-name>',
  '<command-message>',
  '<command-args>',
  '<local-command-stdout>',
  '<local-command-stderr>',
  '<local-command-caveat>',
  '<bash-input>',
  '<bash-stdout>',
  '<bash-stderr>',
  '<system-reminder>',
  '<task-notification>',
  '<user-memory-input>',
  '[Request interrupted by user',
  'Caveat: The messages below were generated by the user while running local commands',
  '<environment_context>',
  '<user_instructions>',
  '<developer_instructions>',
  '<permissions instructions>',
  '<user_shell_command>',
  '<turn_aborted>',
  '<subagent_notification>',
  '# AGENTS.md instructions for',
  '# Instructions from AGENTS.md',
  '<INSTRUCTIONS>',
];
const SUMMARY_OPENING = 'This session is being continued from a previous conversation';

/** Whether a code point is white space to JavaScript's trim() (WhiteSpace and LineTerminator). */
function isJsSpace(c: u32): bool {
  if (c <= 0x20) return c == 0x20 || (c >= 0x09 && c <= 0x0d);
  if (c < 0xa0) return false;
  return c == 0xa0 || c == 0x1680 || (c >= 0x2000 && c <= 0x200a) || c == 0x2028 || c == 0x2029 || c == 0x202f || c == 0x205f || c == 0x3000 || c == 0xfeff;
}

@inline function hexValue(c: u32): u32 {
  return c <= 0x39 ? c - 0x30 : (c | 0x20) - 0x61 + 10;
}

// The character read by nextChar: its code point (a lone surrogate from \u as itself) and its length in bytes.
let charCode: u32 = 0;
let charBytes: i32 = 0;

/** Reads the character at p of a JSON string's content (valid: stage one checked it). */
function nextChar(p: usize): void {
  const c = <u32>load<u8>(p);
  if (c == 0x5c) {
    const e = <u32>load<u8>(p + 1);
    charBytes = 2;
    if (e == 0x75) {
      charCode = (hexValue(load<u8>(p + 2)) << 12) | (hexValue(load<u8>(p + 3)) << 8) | (hexValue(load<u8>(p + 4)) << 4) | hexValue(load<u8>(p + 5));
      charBytes = 6;
    } else if (e == 0x6e) charCode = 0x0a;
    else if (e == 0x74) charCode = 0x09;
    else if (e == 0x72) charCode = 0x0d;
    else if (e == 0x66) charCode = 0x0c;
    else if (e == 0x62) charCode = 0x08;
    else charCode = e;
  } else if (c < 0x80) {
    charCode = c;
    charBytes = 1;
  } else if (c < 0xe0) {
    charCode = ((c & 0x1f) << 6) | (<u32>load<u8>(p + 1) & 0x3f);
    charBytes = 2;
  } else if (c < 0xf0) {
    charCode = ((c & 0x0f) << 12) | ((<u32>load<u8>(p + 1) & 0x3f) << 6) | (<u32>load<u8>(p + 2) & 0x3f);
    charBytes = 3;
  } else {
    charCode = 0x10000;
    charBytes = 4;
  }
}

/** Whether the decoded text at [p, end) starts with the ASCII `prefix`. */
function startsWith(p: usize, end: usize, prefix: string): bool {
  const n = prefix.length;
  let q = p;
  for (let j = 0; j < n; j++) {
    if (q >= end) return false;
    nextChar(q);
    if (charCode != <u32>prefix.charCodeAt(j)) return false;
    q += <usize>charBytes;
  }
  return true;
}

/**
 * The text in `slot` (a string, else ""): 0 when it is blank to trim(), else TEXT_PRESENT with
 * TEXT_INJECTED when it starts with a harness prefix after its leading white space, and
 * TEXT_SUMMARY when it starts with the compaction summary opening (both within its first 200
 * UTF-16 units, as ClaudeParser reads them).
 */
function classifyText(slot: i32): i32 {
  const kind = slotKind(slot);
  if (kind != STRING && kind != ESCAPED_STRING) return 0;
  const p = slotPointer(slot);
  const end = p + <usize>slotLength(slot);
  let q = p;
  let units = 0;
  while (q < end) {
    nextChar(q);
    if (!isJsSpace(charCode)) break;
    q += <usize>charBytes;
    units++;
  }
  if (q >= end) return 0;
  let flags = TEXT_PRESENT;
  for (let k = 0; k < INJECTED_PREFIXES.length; k++) {
    const prefix = unchecked(INJECTED_PREFIXES[k]);
    if (units + prefix.length <= FIRST_TEXT_UNITS && startsWith(q, end, prefix)) {
      flags |= TEXT_INJECTED;
      break;
    }
  }
  if (startsWith(p, end, SUMMARY_OPENING)) flags |= TEXT_SUMMARY;
  return flags;
}

@inline function result(index: i32, value: i32): void {
  store<i32>(out + <usize>LINK_AREA + (<usize>index << 2), value);
}

/**
 * After skimClaude returned OK: reads the whole record the way ClaudeParser does (recordSlots
 * and readMessageSlots) when it is a plain one, and writes what the caller stores at
 * output + LINK_AREA (RESULT_…, after linkRecord's three). Anything the caller must decide
 * itself (system and meta records, escaped strings where they matter, user text, agent ids,
 * several tool calls in one line, usage that is not plain integers, the header fields while
 * the caller still needs them) returns LINK_BY_CALLER before anything is changed. Otherwise
 * LINK_DUPLICATE or LINK_ADDED (as linkRecord), or ID_NO_MEMORY.
 */
export function readRecord(context: usize): i32 {
  const type = typeCode();
  if (type == 0 || slotKind(UUID_SLOT) != STRING || slotKind(PARENT_SLOT) == ESCAPED_STRING || isText(slotKind(AGENT_ID_SLOT))) return LINK_BY_CALLER;
  const needs = load<i32>(context + <usize>CONTEXT_FLAGS);
  if ((needs & NEED_SESSION_ID) != 0 && isText(slotKind(SESSION_ID_SLOT))) return LINK_BY_CALLER;
  if ((needs & NEED_CWD) != 0 && isText(slotKind(CWD_SLOT))) return LINK_BY_CALLER;
  if ((needs & NEED_FORK) != 0 && slotKind(FORKED_FROM_SLOT) == OBJECT) return LINK_BY_CALLER;
  const versionKind = slotKind(VERSION_SLOT);
  if (versionKind == ESCAPED_STRING || (versionKind == STRING && slotLength(VERSION_SLOT) > VERSION_BYTES)) return LINK_BY_CALLER;
  const assistant = type == TYPE_ASSISTANT;
  let kind = 0;
  let steps = 0;
  let flags = (needs & NEED_SUBAGENT) != 0 || slotKind(IS_SIDECHAIN_SLOT) == TRUE ? SIDECHAIN : 0;
  let model = -1;
  let tool = -1;
  let usage = 0;
  let input = 0;
  let output = 0;
  let cacheRead = 0;
  let cacheCreation = 0;
  let toolName: usize = 0;
  let toolNameLength = 0;
  if (type == TYPE_USER || assistant) {
    if (slotKind(MESSAGE_SLOT) != OBJECT || slotKind(MESSAGE_ID_SLOT) == ESCAPED_STRING) return LINK_BY_CALLER;
    let hasText = false;
    let hasToolResult = false;
    let hasMedia = false;
    let calls = 0;
    // What the first non-blank user text tells (TEXT_… bits; a string content counts even when blank).
    let firstText = 0;
    const contentKind = slotKind(CONTENT_SLOT);
    if (isText(contentKind)) {
      if (!assistant) {
        firstText = classifyText(CONTENT_SLOT);
        if (firstText < 0) return LINK_BY_CALLER;
        hasText = (firstText & TEXT_PRESENT) != 0;
      }
    } else if (contentKind == ARRAY) {
      const count = load<i32>(slotAddress(FIELD_COUNT));
      for (let k = 0; k < count; k++) {
        const slot = FIELD_COUNT + 1 + k * BLOCK_SLOTS;
        if (slotKind(slot) != OBJECT) continue;
        const block = blockType(slot + 1);
        if (block == BLOCK_UNSURE) return LINK_BY_CALLER;
        if (block == BLOCK_TEXT) {
          // Assistant texts do not matter.
          if (assistant) continue;
          const text = classifyText(slot + 4);
          if (text < 0) return LINK_BY_CALLER;
          if (text == 0) continue;
          if (!hasText) firstText = text;
          hasText = true;
        } else if (block == BLOCK_TOOL_RESULT) hasToolResult = true;
        else if (block == BLOCK_MEDIA) hasMedia = true;
        else if (block == BLOCK_TOOL_USE) {
          calls++;
          const nameKind = slotKind(slot + 2);
          if (calls > 1 || nameKind == ESCAPED_STRING) return LINK_BY_CALLER;
          if (nameKind == STRING) {
            toolName = slotPointer(slot + 2);
            toolNameLength = slotLength(slot + 2);
          } else {
            toolName = UNKNOWN_NAME;
            toolNameLength = 7;
          }
        }
      }
    }
    if (hasToolResult) flags |= TOOL_RESULT;
    if (assistant) {
      steps = 1;
      const modelKind = slotKind(MODEL_SLOT);
      if (modelKind == ESCAPED_STRING) return LINK_BY_CALLER;
      if (slotKind(IS_API_ERROR_SLOT) == TRUE || (modelKind == STRING && slotSpells(MODEL_SLOT, '<synthetic>'))) flags |= SYNTHETIC;
      else if (modelKind == STRING) model = -2;
      if (slotKind(USAGE_SLOT) == OBJECT) {
        usage = 1;
        input = tokens(FIRST_USAGE_SLOT);
        output = tokens(FIRST_USAGE_SLOT + 1);
        cacheRead = tokens(FIRST_USAGE_SLOT + 2);
        cacheCreation = tokens(FIRST_USAGE_SLOT + 3);
        if ((input | output | cacheRead | cacheCreation) < 0) return LINK_BY_CALLER;
      }
    } else {
      steps = hasText && !hasToolResult ? 1 : 0;
      if (slotKind(IS_COMPACT_SUMMARY_SLOT) == TRUE) kind = KIND_COMPACTION_SUMMARY;
      else if (hasToolResult) kind = KIND_TOOL_RESULT;
      else if (slotKind(IS_META_SLOT) == TRUE || (firstText & TEXT_INJECTED) != 0) kind = KIND_INJECTED;
      else if ((firstText & TEXT_SUMMARY) != 0) kind = KIND_COMPACTION_SUMMARY;
      else if (hasText || hasMedia) kind = KIND_HUMAN;
    }
  }
  // Decided: from here on the record is read here.
  let linkFlags = 0;
  if (versionKind == STRING) {
    const p = slotPointer(VERSION_SLOT);
    const len = slotLength(VERSION_SLOT);
    const kept = load<i32>(context + <usize>CONTEXT_VERSION_LENGTH) - 1;
    if (kept != len || memory.compare(p, context + CONTEXT_VERSION, <usize>len) != 0) {
      memory.copy(context + CONTEXT_VERSION, p, <usize>len);
      store<i32>(context + <usize>CONTEXT_VERSION_LENGTH, len + 1);
      linkFlags |= VERSION_CHANGED;
    }
  }
  const linked = linkRecord(load<u32>(context + <usize>CONTEXT_STATE), load<u32>(context + <usize>CONTEXT_UUIDS), load<u32>(context + <usize>CONTEXT_MESSAGES), assistant);
  if (linked != LINK_ADDED) {
    if (linked == LINK_DUPLICATE) result(2, linkFlags);
    return linked;
  }
  if (model == -2) {
    model = numberNear(<usize>load<u32>(context + <usize>CONTEXT_MODELS), context + <usize>CONTEXT_LAST_MODEL, slotPointer(MODEL_SLOT), slotLength(MODEL_SLOT));
    if (model == ID_NO_MEMORY) return ID_NO_MEMORY;
  }
  if (toolName != 0) {
    tool = numberNear(<usize>load<u32>(context + <usize>CONTEXT_TOOLS), context + <usize>CONTEXT_LAST_TOOL, toolName, toolNameLength);
    if (tool == ID_NO_MEMORY) return ID_NO_MEMORY;
  }
  result(2, load<i32>(out + <usize>LINK_AREA + 8) | linkFlags);
  result(RESULT_RECORD_FLAGS, flags);
  result(RESULT_TYPE, type);
  result(RESULT_KIND, kind);
  result(RESULT_STEPS, steps);
  result(RESULT_MODEL, model);
  result(RESULT_TOOL, tool);
  result(RESULT_USAGE, usage);
  result(RESULT_INPUT, input);
  result(RESULT_OUTPUT, output);
  result(RESULT_CACHE_READ, cacheRead);
  result(RESULT_CACHE_CREATION, cacheCreation);
  return LINK_ADDED;
}

/** A new readRecord context for the given tables and link state; 0 when there is no memory. */
export function contextNew(uuids: usize, messages: usize, models: usize, tools: usize, state: usize): usize {
  const context = tablesAlloc(<usize>CONTEXT_BYTES);
  if (context == 0) return 0;
  store<u32>(context + <usize>CONTEXT_UUIDS, <u32>uuids);
  store<u32>(context + <usize>CONTEXT_MESSAGES, <u32>messages);
  store<u32>(context + <usize>CONTEXT_MODELS, <u32>models);
  store<u32>(context + <usize>CONTEXT_TOOLS, <u32>tools);
  store<u32>(context + <usize>CONTEXT_STATE, <u32>state);
  return context;
}

/** skimClaude, then readRecord when the line is read: SKIM results (≤ 0: not read), or 10 + a readRecord result. */
export function skimRecord(src: usize, len: i32, quoteArea: usize, output: usize, offset: i32, context: usize): i32 {
  const skim = skimClaude(src, len, quoteArea, output, offset);
  if (skim != OK) return skim;
  return 10 + readRecord(context);
}
