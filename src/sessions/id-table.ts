/**
 * A set of ids (Claude Code `uuid`s, API message ids) keyed by their UTF-8 bytes,
 * numbered in insertion order. A transcript has one id per line: a Map of hundreds of
 * thousands of fresh strings costs more than reading the lines, so ids are hashed
 * straight from the line bytes and decoded to strings only when asked. A lowercase
 * canonical uuid (36 bytes) is kept as its 16 bytes in four int32 (memory is what a
 * large table costs most); any other id as its bytes in a pool. Pure.
 */
/** A set of ids numbered in insertion order (IdTable here, WasmIdTable in id-table-wasm.ts). */
export interface IdSet {
  readonly count: number;
  /** The number of the id spelled by `bytes[from, to)`, or -1 when it is new (it is then added as number `count - 1`). */
  findOrAdd(bytes: Uint8Array, from: number, to: number): number;
  /** The number of the id spelled by `bytes[from, to)`, or -1. */
  find(bytes: Uint8Array, from: number, to: number): number;
  findOrAddString(id: string): number;
  findString(id: string): number;
  /** Whether id number `index` is spelled by `bytes[from, to)`. */
  equals(index: number, bytes: Uint8Array, from: number, to: number): boolean;
  text(index: number): string;
}

export class IdTable implements IdSet {
  private size = 0;
  /** Open addressing, two entries a slot: id number (-1 when empty) and its hash, side by side for one memory access. */
  private slots: Int32Array;
  /** Four int32 an id: a uuid's 16 bytes, or (pool offset, length, 0, 0) for other ids. */
  private keys: Int32Array;
  /** 1 for ids kept in the pool. */
  private pooled: Uint8Array;
  private pool: Buffer;
  private poolUsed = 0;
  /** Encodes string ids (from JSON.parse) to bytes; grows for long ones. */
  private scratch = Buffer.allocUnsafe(256);
  /** The uuid read by the last `parseUuid`. */
  private w0 = 0;
  private w1 = 0;
  private w2 = 0;
  private w3 = 0;

  /** `expected`: how many ids to make room for at once (the table grows past it; growing copies everything). */
  constructor(expected = 512) {
    const capacity = Math.max(512, expected);
    let slots = 1024;
    while (slots < 2 * capacity) slots *= 2;
    this.slots = new Int32Array(2 * slots).fill(-1);
    this.keys = new Int32Array(4 * capacity);
    this.pooled = new Uint8Array(capacity);
    this.pool = Buffer.allocUnsafe(4096);
  }

  get count(): number {
    return this.size;
  }

  /** The number of the id spelled by `bytes[from, to)`, or -1 when it is new (it is then added as number `count - 1`). */
  findOrAdd(bytes: Uint8Array, from: number, to: number): number {
    const uuid = this.parseUuid(bytes, from, to);
    const hash = uuid ? this.uuidHash() : hashBytes(bytes, from, to);
    const slot = uuid ? this.uuidSlot(hash) : this.pooledSlot(bytes, from, to, hash);
    const found = this.slots[slot]!;
    if (found >= 0) return found;
    this.insert(uuid, bytes, from, to, hash, slot);
    return -1;
  }

  /** The number of the id spelled by `bytes[from, to)`, or -1. */
  find(bytes: Uint8Array, from: number, to: number): number {
    const slot = this.parseUuid(bytes, from, to) ? this.uuidSlot(this.uuidHash()) : this.pooledSlot(bytes, from, to, hashBytes(bytes, from, to));
    return this.slots[slot]!;
  }

  findOrAddString(id: string): number {
    const length = this.encode(id);
    return this.findOrAdd(this.scratch, 0, length);
  }

  findString(id: string): number {
    const length = this.encode(id);
    return this.find(this.scratch, 0, length);
  }

  /** Whether id number `index` is spelled by `bytes[from, to)`. */
  equals(index: number, bytes: Uint8Array, from: number, to: number): boolean {
    if (this.pooled[index]) return this.poolEquals(index, bytes, from, to);
    if (!this.parseUuid(bytes, from, to)) return false;
    const k = index * 4;
    const keys = this.keys;
    return keys[k] === this.w0 && keys[k + 1] === this.w1 && keys[k + 2] === this.w2 && keys[k + 3] === this.w3;
  }

  text(index: number): string {
    const k = index * 4;
    const keys = this.keys;
    if (this.pooled[index]) return this.pool.toString('utf8', keys[k]!, keys[k]! + keys[k + 1]!);
    const hex = (word: number): string => (word >>> 0).toString(16).padStart(8, '0');
    const a = hex(keys[k]!);
    const b = hex(keys[k + 1]!);
    const c = hex(keys[k + 2]!);
    const d = hex(keys[k + 3]!);
    return `${a}-${b.slice(0, 4)}-${b.slice(4)}-${c.slice(0, 4)}-${c.slice(4)}${d}`;
  }

  private encode(id: string): number {
    if (id.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafe(id.length * 3);
    return this.scratch.write(id, 0, 'utf8');
  }

  /** Reads `xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx` (lowercase hex) into w0..w3; false for anything else. */
  private parseUuid(bytes: Uint8Array, from: number, to: number): boolean {
    if (to - from !== 36 || bytes[from + 8] !== DASH || bytes[from + 13] !== DASH || bytes[from + 18] !== DASH || bytes[from + 23] !== DASH) return false;
    const g1 = hex4(bytes, from);
    const g2 = hex4(bytes, from + 4);
    const g3 = hex4(bytes, from + 9);
    const g4 = hex4(bytes, from + 14);
    const g5 = hex4(bytes, from + 19);
    const g6 = hex4(bytes, from + 24);
    const g7 = hex4(bytes, from + 28);
    const g8 = hex4(bytes, from + 32);
    if ((g1 | g2 | g3 | g4 | g5 | g6 | g7 | g8) < 0) return false;
    this.w0 = (g1 << 16) | g2;
    this.w1 = (g3 << 16) | g4;
    this.w2 = (g5 << 16) | g6;
    this.w3 = (g7 << 16) | g8;
    return true;
  }

  private uuidHash(): number {
    let h = Math.imul(this.w0 ^ 0x9e3779b9, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 15) ^ this.w1, 0xc2b2ae35);
    h = Math.imul(h ^ (h >>> 13) ^ this.w2, 0x85ebca6b);
    h = Math.imul(h ^ (h >>> 16) ^ this.w3, 0xc2b2ae35);
    return h ^ (h >>> 15);
  }

  /** The slot (its first entry) holding the uuid in w0..w3, or the empty slot where it would go (linear probing). */
  private uuidSlot(hash: number): number {
    const slots = this.slots;
    const keys = this.keys;
    const mask = slots.length - 2;
    let slot = (hash << 1) & mask;
    for (;;) {
      const index = slots[slot]!;
      if (index < 0) return slot;
      if (slots[slot + 1] === hash && !this.pooled[index]) {
        const k = index * 4;
        if (keys[k] === this.w0 && keys[k + 1] === this.w1 && keys[k + 2] === this.w2 && keys[k + 3] === this.w3) return slot;
      }
      slot = (slot + 2) & mask;
    }
  }

  private pooledSlot(bytes: Uint8Array, from: number, to: number, hash: number): number {
    const slots = this.slots;
    const mask = slots.length - 2;
    let slot = (hash << 1) & mask;
    for (;;) {
      const index = slots[slot]!;
      if (index < 0 || (slots[slot + 1] === hash && this.pooled[index] && this.poolEquals(index, bytes, from, to))) return slot;
      slot = (slot + 2) & mask;
    }
  }

  private poolEquals(index: number, bytes: Uint8Array, from: number, to: number): boolean {
    const length = to - from;
    if (this.keys[index * 4 + 1] !== length) return false;
    const offset = this.keys[index * 4]!;
    const pool = this.pool;
    for (let k = 0; k < length; k += 1) if (pool[offset + k] !== bytes[from + k]) return false;
    return true;
  }

  private insert(uuid: boolean, bytes: Uint8Array, from: number, to: number, hash: number, slot: number): void {
    const index = this.size;
    if (index === this.pooled.length) {
      const keys = new Int32Array(this.keys.length * 2);
      keys.set(this.keys);
      this.keys = keys;
      const pooled = new Uint8Array(this.pooled.length * 2);
      pooled.set(this.pooled);
      this.pooled = pooled;
    }
    const k = index * 4;
    if (uuid) {
      this.keys[k] = this.w0;
      this.keys[k + 1] = this.w1;
      this.keys[k + 2] = this.w2;
      this.keys[k + 3] = this.w3;
    } else {
      const length = to - from;
      if (this.poolUsed + length > this.pool.length) {
        const pool = Buffer.allocUnsafe(Math.max(this.pool.length * 2, this.poolUsed + length));
        this.pool.copy(pool, 0, 0, this.poolUsed);
        this.pool = pool;
      }
      const pool = this.pool;
      const offset = this.poolUsed;
      for (let j = 0; j < length; j += 1) pool[offset + j] = bytes[from + j]!;
      this.poolUsed += length;
      this.keys[k] = offset;
      this.keys[k + 1] = length;
      this.pooled[index] = 1;
    }
    this.slots[slot] = index;
    this.slots[slot + 1] = hash;
    this.size = index + 1;
    // Keep at most half of the slots full: probes stay short.
    if (this.size * 4 > this.slots.length) this.rehash();
  }

  private rehash(): void {
    const old = this.slots;
    const slots = new Int32Array(old.length * 2).fill(-1);
    const mask = slots.length - 2;
    for (let s = 0; s < old.length; s += 2) {
      const index = old[s]!;
      if (index < 0) continue;
      const hash = old[s + 1]!;
      let slot = (hash << 1) & mask;
      while (slots[slot]! >= 0) slot = (slot + 2) & mask;
      slots[slot] = index;
      slots[slot + 1] = hash;
    }
    this.slots = slots;
  }
}

const DASH = 0x2d;
/** Value of a lowercase hex digit by byte, else -1. */
const HEX = new Int8Array(256).fill(-1);
for (let c = 0; c < 10; c += 1) HEX[0x30 + c] = c;
for (let c = 0; c < 6; c += 1) HEX[0x61 + c] = 10 + c;

/** Four lowercase hex digits as a number, or -1. */
function hex4(bytes: Uint8Array, at: number): number {
  const a = HEX[bytes[at]!]!;
  const b = HEX[bytes[at + 1]!]!;
  const c = HEX[bytes[at + 2]!]!;
  const d = HEX[bytes[at + 3]!]!;
  return (a | b | c | d) < 0 ? -1 : (a << 12) | (b << 8) | (c << 4) | d;
}

/** A multiplicative hash over 4 bytes at a time, then a final mix so that the low bits (the slot) depend on every byte. */
function hashBytes(bytes: Uint8Array, from: number, to: number): number {
  let h = 0x811c9dc5 ^ (to - from);
  let i = from;
  for (; i + 4 <= to; i += 4) {
    const word = bytes[i]! | (bytes[i + 1]! << 8) | (bytes[i + 2]! << 16) | (bytes[i + 3]! << 24);
    h = Math.imul(h ^ word, 0x01000193);
    h ^= h >>> 15;
  }
  for (; i < to; i += 1) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  return h;
}
