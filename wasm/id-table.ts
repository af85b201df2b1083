// AssemblyScript, compiled to WebAssembly by tools/build-wasm.mjs (not part of the TypeScript build).
//
// Sets of ids (Claude Code `uuid`s, API message ids) keyed by their UTF-8 bytes and numbered
// in insertion order, kept in the module's memory so that the line reader can look ids up
// where it reads them (claude-fields.ts: linkRecord). The same design as the TypeScript
// IdTable (src/sessions/id-table.ts), which these must match: a lowercase canonical uuid is
// kept as its 16 bytes, any other id as its bytes in a pool; open addressing with linear
// probing, at most half full.
//
// Memory: tables take memory from `heapTop` upwards (the caller sets where that starts,
// above every region it uses) and grow the memory when they need more. Memory that
// WebAssembly adds is zero (memory reused after tablesInit is cleared), so a slot array
// needs no filling: a slot holds the id number plus one (0: empty) and the hash. Grown arrays are copied and the old ones left
// (the module is one reader's and is dropped with it). The memory is shared, so growing it
// never invalidates the caller's views of it.

// Table header (u32 fields) at the table's address.
const SIZE: usize = 0;
const CAPACITY: usize = 4;
const SLOT_COUNT: usize = 8;
const SLOTS: usize = 12;
const KEYS: usize = 16;
const POOLED: usize = 20;
const POOL: usize = 24;
const POOL_USED: usize = 28;
const POOL_CAPACITY: usize = 32;
const TEXT: usize = 36;
const TEXT_CAPACITY: usize = 40;
const HEADER_BYTES: usize = 48;

/** Returned when the memory cannot grow or the table is broken (nothing was added). */
export const ID_NO_MEMORY: i32 = -2;

let heapTop: usize = 0;
/** The highest heapTop so far: memory below it may have been used (by tables since dropped). */
let highWater: usize = 0;

/** Where tables start taking memory (above every region the caller uses); drops every table made before. */
export function tablesInit(base: usize): void {
  heapTop = (base + 15) & ~(<usize>15);
  if (highWater < heapTop) highWater = heapTop;
}

/** `bytes` of zero memory, 16-aligned; 0 when the memory cannot grow. */
export function tablesAlloc(bytes: usize): usize {
  const at = heapTop;
  const end = (at + bytes + 15) & ~(<usize>15);
  const have = (<usize>memory.size()) << 16;
  if (end > have) {
    const pages = <i32>((end - have + 0xffff) >> 16);
    if (memory.grow(pages) < 0) return 0;
  }
  // Memory the module adds is zero; memory used before (tablesInit dropped its tables) is cleared.
  if (at < highWater) memory.fill(at, 0, (end < highWater ? end : highWater) - at);
  heapTop = end;
  if (end > highWater) highWater = end;
  return at;
}

@inline function field(t: usize, at: usize): u32 {
  return load<u32>(t + at);
}

@inline function setField(t: usize, at: usize, value: u32): void {
  store<u32>(t + at, value);
}

/** A new table with room for `expected` ids before it grows; 0 when there is no memory. */
export function idTableNew(expected: i32): usize {
  const capacity: u32 = <u32>max(expected, 512);
  let slotCount: u32 = 1024;
  while (slotCount < 2 * capacity) slotCount <<= 1;
  if (!hexReady) fillHex();
  const t = tablesAlloc(HEADER_BYTES);
  const slots = tablesAlloc(<usize>slotCount << 3);
  const keys = tablesAlloc(<usize>capacity << 4);
  const pooled = tablesAlloc(<usize>capacity);
  // Room for ids of about 32 bytes (API message ids) at once: memory is only touched as it is used, a grown pool is copied.
  const poolCapacity: u32 = max(4096, capacity << 5);
  const pool = tablesAlloc(<usize>poolCapacity);
  const text = tablesAlloc(256);
  if (t == 0 || slots == 0 || keys == 0 || pooled == 0 || pool == 0 || text == 0) return 0;
  setField(t, CAPACITY, capacity);
  setField(t, SLOT_COUNT, slotCount);
  setField(t, SLOTS, <u32>slots);
  setField(t, KEYS, <u32>keys);
  setField(t, POOLED, <u32>pooled);
  setField(t, POOL, <u32>pool);
  setField(t, POOL_CAPACITY, poolCapacity);
  setField(t, TEXT, <u32>text);
  setField(t, TEXT_CAPACITY, 256);
  return t;
}

export function idCount(t: usize): i32 {
  return <i32>field(t, SIZE);
}

// The uuid read by the last parseUuid.
let w0: u32 = 0;
let w1: u32 = 0;
let w2: u32 = 0;
let w3: u32 = 0;

// Value of each byte as a lowercase hex digit, or 0x10000 (so that a group of four with a bad digit is above 0xffff).
const HEX = memory.data(256 * 4);
let hexReady = false;

function fillHex(): void {
  for (let c = 0; c < 256; c++) {
    const digit = <u32>c - 0x30;
    const letter = <u32>c - 0x61;
    store<u32>(HEX + (<usize>c << 2), digit < 10 ? digit : letter < 6 ? letter + 10 : 0x10000);
  }
  hexReady = true;
}

@inline function hexDigit(c: u32): u32 {
  return load<u32>(HEX + (<usize>c << 2));
}

@inline function hex4(p: usize): u32 {
  return (hexDigit(load<u8>(p)) << 12) | (hexDigit(load<u8>(p + 1)) << 8) | (hexDigit(load<u8>(p + 2)) << 4) | hexDigit(load<u8>(p + 3));
}

/** Reads `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (lowercase hex) into w0..w3; false for anything else. */
function parseUuid(p: usize, len: i32): bool {
  if (len != 36 || load<u8>(p + 8) != 0x2d || load<u8>(p + 13) != 0x2d || load<u8>(p + 18) != 0x2d || load<u8>(p + 23) != 0x2d) return false;
  const g1 = hex4(p);
  const g2 = hex4(p + 4);
  const g3 = hex4(p + 9);
  const g4 = hex4(p + 14);
  const g5 = hex4(p + 19);
  const g6 = hex4(p + 24);
  const g7 = hex4(p + 28);
  const g8 = hex4(p + 32);
  if ((g1 | g2 | g3 | g4 | g5 | g6 | g7 | g8) > 0xffff) return false;
  w0 = (g1 << 16) | g2;
  w1 = (g3 << 16) | g4;
  w2 = (g5 << 16) | g6;
  w3 = (g7 << 16) | g8;
  return true;
}

function uuidHash(): u32 {
  let h = (w0 ^ 0x9e3779b9) * 0x85ebca6b;
  h = (h ^ (h >> 15) ^ w1) * 0xc2b2ae35;
  h = (h ^ (h >> 13) ^ w2) * 0x85ebca6b;
  h = (h ^ (h >> 16) ^ w3) * 0xc2b2ae35;
  return h ^ (h >> 15);
}

function bytesHash(p: usize, len: i32): u32 {
  let h: u32 = 0x811c9dc5 ^ <u32>len;
  let i = 0;
  for (; i + 4 <= len; i += 4) {
    h = (h ^ load<u32>(p + <usize>i)) * 0x01000193;
    h ^= h >> 15;
  }
  for (; i < len; i++) h = (h ^ <u32>load<u8>(p + <usize>i)) * 0x01000193;
  h ^= h >> 16;
  h *= 0x85ebca6b;
  return h ^ (h >> 13);
}

@inline function isPooled(t: usize, index: u32): bool {
  return load<u8>(<usize>field(t, POOLED) + <usize>index) != 0;
}

function uuidEquals(t: usize, index: u32): bool {
  const k = <usize>field(t, KEYS) + (<usize>index << 4);
  return load<u32>(k) == w0 && load<u32>(k, 4) == w1 && load<u32>(k, 8) == w2 && load<u32>(k, 12) == w3;
}

function poolEquals(t: usize, index: u32, p: usize, len: i32): bool {
  const k = <usize>field(t, KEYS) + (<usize>index << 4);
  if (load<i32>(k, 4) != len) return false;
  return memory.compare(<usize>field(t, POOL) + <usize>load<u32>(k), p, <usize>len) == 0;
}

/** The slot (its address) holding the id, or the empty slot where it would go; 0 when every slot is taken (never, unless the table is broken: an error rather than a hang). */
function slotOf(t: usize, uuid: bool, p: usize, len: i32, hash: u32): usize {
  const slots = <usize>field(t, SLOTS);
  const mask = field(t, SLOT_COUNT) - 1;
  let s = hash & mask;
  let at = slots + (<usize>s << 3);
  let entry = load<u32>(at);
  let probes = mask;
  while (entry != 0) {
    if (load<u32>(at, 4) == hash) {
      const index = entry - 1;
      if (isPooled(t, index) ? !uuid && poolEquals(t, index, p, len) : uuid && uuidEquals(t, index)) return at;
    }
    if (probes-- == 0) return 0;
    s = (s + 1) & mask;
    at = slots + (<usize>s << 3);
    entry = load<u32>(at);
  }
  return at;
}

function grow(t: usize, from: usize, used: usize, bytes: usize): usize {
  const to = tablesAlloc(bytes);
  if (to != 0) memory.copy(to, from, used);
  return to;
}

/** Adds the id (its slot `at` is empty); false when there is no memory. */
function insert(t: usize, uuid: bool, p: usize, len: i32, hash: u32, at: usize): bool {
  const index = field(t, SIZE);
  const capacity = field(t, CAPACITY);
  if (index == capacity) {
    const keys = grow(t, <usize>field(t, KEYS), <usize>capacity << 4, <usize>capacity << 5);
    const pooled = grow(t, <usize>field(t, POOLED), <usize>capacity, <usize>capacity << 1);
    if (keys == 0 || pooled == 0) return false;
    setField(t, KEYS, <u32>keys);
    setField(t, POOLED, <u32>pooled);
    setField(t, CAPACITY, capacity << 1);
  }
  const k = <usize>field(t, KEYS) + (<usize>index << 4);
  if (uuid) {
    store<u32>(k, w0);
    store<u32>(k, w1, 4);
    store<u32>(k, w2, 8);
    store<u32>(k, w3, 12);
  } else {
    const used = field(t, POOL_USED);
    let poolCapacity = field(t, POOL_CAPACITY);
    if (used + <u32>len > poolCapacity) {
      while (used + <u32>len > poolCapacity) poolCapacity <<= 1;
      const pool = grow(t, <usize>field(t, POOL), <usize>used, <usize>poolCapacity);
      if (pool == 0) return false;
      setField(t, POOL, <u32>pool);
      setField(t, POOL_CAPACITY, poolCapacity);
    }
    memory.copy(<usize>field(t, POOL) + <usize>used, p, <usize>len);
    setField(t, POOL_USED, used + <u32>len);
    store<u32>(k, used);
    store<i32>(k, len, 4);
    store<u8>(<usize>field(t, POOLED) + <usize>index, 1);
  }
  store<u32>(at, index + 1);
  store<u32>(at, hash, 4);
  setField(t, SIZE, index + 1);
  if ((index + 1) << 1 > field(t, SLOT_COUNT)) return rehash(t);
  return true;
}

function rehash(t: usize): bool {
  const oldSlots = <usize>field(t, SLOTS);
  const oldCount = field(t, SLOT_COUNT);
  const count = oldCount << 1;
  const slots = tablesAlloc(<usize>count << 3);
  if (slots == 0) return false;
  const mask = count - 1;
  for (let s: u32 = 0; s < oldCount; s++) {
    const from = oldSlots + (<usize>s << 3);
    const entry = load<u32>(from);
    if (entry == 0) continue;
    const hash = load<u32>(from, 4);
    let n = hash & mask;
    let probes = mask;
    while (load<u32>(slots + (<usize>n << 3)) != 0) {
      if (probes-- == 0) return false;
      n = (n + 1) & mask;
    }
    store<u32>(slots + (<usize>n << 3), entry);
    store<u32>(slots + (<usize>n << 3), hash, 4);
  }
  setField(t, SLOTS, <u32>slots);
  setField(t, SLOT_COUNT, count);
  return true;
}

/** The number of the id spelled by the bytes at [p, p + len), or -1 when it is new (it is then added as number count - 1); ID_NO_MEMORY. */
export function idFindOrAdd(t: usize, p: usize, len: i32): i32 {
  const uuid = parseUuid(p, len);
  const hash = uuid ? uuidHash() : bytesHash(p, len);
  const at = slotOf(t, uuid, p, len, hash);
  if (at == 0) return ID_NO_MEMORY;
  const entry = load<u32>(at);
  if (entry != 0) return <i32>entry - 1;
  return insert(t, uuid, p, len, hash, at) ? -1 : ID_NO_MEMORY;
}

/** The number of the id spelled by the bytes at [p, p + len), or -1. */
export function idFind(t: usize, p: usize, len: i32): i32 {
  const uuid = parseUuid(p, len);
  const at = slotOf(t, uuid, p, len, uuid ? uuidHash() : bytesHash(p, len));
  return at == 0 ? -1 : <i32>load<u32>(at) - 1;
}

/** idFind, trying number `guess` first (a hash probe is a cache miss in a large table; the id is often the one just added). */
export function idFindNear(t: usize, p: usize, len: i32, guess: i32): i32 {
  if (guess >= 0 && idEquals(t, guess, p, len)) return guess;
  return idFind(t, p, len);
}

/** Whether id number `index` is spelled by the bytes at [p, p + len). */
export function idEquals(t: usize, index: i32, p: usize, len: i32): bool {
  if (isPooled(t, <u32>index)) return poolEquals(t, <u32>index, p, len);
  return parseUuid(p, len) && uuidEquals(t, <u32>index);
}

const HEX_DIGITS = '0123456789abcdef';

function writeHex(at: usize, word: u32, digits: i32): void {
  for (let d = digits - 1; d >= 0; d--) {
    store<u8>(at + <usize>d, <u8>HEX_DIGITS.charCodeAt(<i32>(word & 15)));
    word >>= 4;
  }
}

/** Writes id number `index` (its UTF-8 bytes) at `idTextAt(t)` and returns its length (ID_NO_MEMORY). */
export function idText(t: usize, index: i32): i32 {
  const k = <usize>field(t, KEYS) + (<usize>index << 4);
  let text = <usize>field(t, TEXT);
  if (!isPooled(t, <u32>index)) {
    writeHex(text, load<u32>(k) >> 16, 4);
    writeHex(text + 4, load<u32>(k) & 0xffff, 4);
    store<u8>(text + 8, 0x2d);
    writeHex(text + 9, load<u32>(k, 4) >> 16, 4);
    store<u8>(text + 13, 0x2d);
    writeHex(text + 14, load<u32>(k, 4) & 0xffff, 4);
    store<u8>(text + 18, 0x2d);
    writeHex(text + 19, load<u32>(k, 8) >> 16, 4);
    store<u8>(text + 23, 0x2d);
    writeHex(text + 24, load<u32>(k, 8) & 0xffff, 4);
    writeHex(text + 28, load<u32>(k, 12), 8);
    return 36;
  }
  const len = load<u32>(k, 4);
  if (len > field(t, TEXT_CAPACITY)) {
    text = tablesAlloc(<usize>len);
    if (text == 0) return ID_NO_MEMORY;
    setField(t, TEXT, <u32>text);
    setField(t, TEXT_CAPACITY, len);
  }
  memory.copy(text, <usize>field(t, POOL) + <usize>load<u32>(k), <usize>len);
  return <i32>len;
}

/** Where `idText` writes (it moves when a longer id needs more room). */
export function idTextAt(t: usize): usize {
  return <usize>field(t, TEXT);
}
