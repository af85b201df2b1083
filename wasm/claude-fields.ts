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
  const n = key.length;
  for (let j = 0; j < n; j++) if (<u32>key.charCodeAt(j) != byte(stringStart + j)) return false;
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
      const p = slotPointer(MESSAGE_ID_SLOT);
      const len = slotLength(MESSAGE_ID_SLOT);
      const last = load<i32>(state, 8) - 1;
      if (last >= 0 && idEquals(messages, last, p, len)) message = last;
      else {
        message = idFindOrAdd(messages, p, len);
        if (message == ID_NO_MEMORY) return ID_NO_MEMORY;
        if (message < 0) message = idCount(messages) - 1;
        store<i32>(state, message + 1, 8);
      }
    } else if (idKind == ESCAPED_STRING) flags |= MESSAGE_ID_BY_CALLER;
  }
  const at = out + <usize>LINK_AREA;
  store<i32>(at, parent);
  store<i32>(at, message, 4);
  store<i32>(at, flags, 8);
  return LINK_ADDED;
}
