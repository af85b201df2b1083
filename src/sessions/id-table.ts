/**
 * A set of ids (Claude Code `uuid`s) keyed by their UTF-8 bytes, numbered in insertion
 * order. A transcript has one id per line: a Map of hundreds of thousands of fresh
 * strings costs more than reading the lines, so ids are hashed straight from the line
 * bytes, kept in one byte pool, and decoded to strings only when asked. Pure.
 */
export class IdTable {
  private size = 0;
  /** Open addressing, two entries a slot: id number (-1 when empty) and its hash, side by side for one memory access. */
  private slots: Int32Array;
  private offsets: Int32Array;
  private lengths: Int32Array;
  private pool: Buffer;
  private poolUsed = 0;
  /** Encodes string ids (from JSON.parse) to bytes; grows for long ones. */
  private scratch = Buffer.allocUnsafe(256);

  /** `expected`: how many ids to make room for at once (the table grows past it; growing copies everything). */
  constructor(expected = 512) {
    const capacity = Math.max(512, expected);
    let slots = 1024;
    while (slots < 2 * capacity) slots *= 2;
    this.slots = new Int32Array(2 * slots).fill(-1);
    this.offsets = new Int32Array(capacity);
    this.lengths = new Int32Array(capacity);
    this.pool = Buffer.allocUnsafe(capacity * 40);
  }

  get count(): number {
    return this.size;
  }

  /** The number of the id spelled by `bytes[from, to)`, or -1 when it is new (it is then added as number `count - 1`). */
  findOrAdd(bytes: Uint8Array, from: number, to: number): number {
    const hash = hashBytes(bytes, from, to);
    const slot = this.slotOf(bytes, from, to, hash);
    const found = this.slots[slot]!;
    if (found >= 0) return found;
    this.insert(bytes, from, to, hash, slot);
    return -1;
  }

  /** The number of the id spelled by `bytes[from, to)`, or -1. */
  find(bytes: Uint8Array, from: number, to: number): number {
    return this.slots[this.slotOf(bytes, from, to, hashBytes(bytes, from, to))]!;
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
    const length = to - from;
    if (this.lengths[index] !== length) return false;
    const offset = this.offsets[index]!;
    const pool = this.pool;
    for (let k = 0; k < length; k += 1) if (pool[offset + k] !== bytes[from + k]) return false;
    return true;
  }

  text(index: number): string {
    const offset = this.offsets[index]!;
    return this.pool.toString('utf8', offset, offset + this.lengths[index]!);
  }

  private encode(id: string): number {
    if (id.length * 3 > this.scratch.length) this.scratch = Buffer.allocUnsafe(id.length * 3);
    return this.scratch.write(id, 0, 'utf8');
  }

  /** The slot (its first entry) holding this id, or the empty slot where it would go (linear probing). */
  private slotOf(bytes: Uint8Array, from: number, to: number, hash: number): number {
    const slots = this.slots;
    const mask = slots.length - 2;
    let slot = (hash << 1) & mask;
    for (;;) {
      const index = slots[slot]!;
      if (index < 0 || (slots[slot + 1] === hash && this.equals(index, bytes, from, to))) return slot;
      slot = (slot + 2) & mask;
    }
  }

  private insert(bytes: Uint8Array, from: number, to: number, hash: number, slot: number): void {
    const index = this.size;
    const length = to - from;
    if (index === this.offsets.length) {
      this.offsets = grow(this.offsets);
      this.lengths = grow(this.lengths);
    }
    if (this.poolUsed + length > this.pool.length) {
      const pool = Buffer.allocUnsafe(Math.max(this.pool.length * 2, this.poolUsed + length));
      this.pool.copy(pool, 0, 0, this.poolUsed);
      this.pool = pool;
    }
    const pool = this.pool;
    const offset = this.poolUsed;
    // Ids are short: a loop beats a native copy call.
    for (let k = 0; k < length; k += 1) pool[offset + k] = bytes[from + k]!;
    this.poolUsed += length;
    this.offsets[index] = offset;
    this.lengths[index] = length;
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

function grow(array: Int32Array): Int32Array<ArrayBuffer> {
  const out = new Int32Array(array.length * 2);
  out.set(array);
  return out;
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
