import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { type IdSet, IdTable } from './id-table.js';
import { JsonScanner } from './json-scan.js';

// The same behaviour from the TypeScript table and from the one in the wasm reader's memory
// (ids then come from bytes outside that memory, and are copied in).
const makers: Array<[string, (expected?: number) => IdSet]> = [
  ['IdTable', (expected) => new IdTable(expected)],
  ['WasmIdTable', (expected) => JsonScanner.create()!.idTable(expected ?? 512)],
];

describe.each(makers)('%s', (_name, makeTable) => {
  it('numbers ids in insertion order and finds them again, from bytes or strings', () => {
    const table = makeTable();
    const line = Buffer.from('{"uuid":"abc-1","parentUuid":"x\u00e9"}');
    expect(table.findOrAdd(line, 9, 14)).toBe(-1);
    expect(table.count).toBe(1);
    expect(table.findOrAdd(line, 9, 14)).toBe(0);
    expect(table.findString('abc-1')).toBe(0);
    expect(table.findString('abc-2')).toBe(-1);
    // A non-ASCII id from JSON.parse matches the same id read as UTF-8 bytes.
    expect(table.findOrAddString('x\u00e9')).toBe(-1);
    const at = line.indexOf('x');
    expect(table.find(line, at, at + 3)).toBe(1);
    expect(table.equals(1, line, at, at + 3)).toBe(true);
    expect(table.equals(0, line, at, at + 3)).toBe(false);
    expect(table.text(1)).toBe('x\u00e9');
    expect(table.findOrAddString('')).toBe(-1);
    expect(table.findString('')).toBe(2);
  });

  it('behaves as a Map from id to insertion number over many ids (rehash and pool growth)', () => {
    fc.assert(
      fc.property(fc.array(fc.string({ minLength: 0, maxLength: 60, unit: 'grapheme' }), { maxLength: 3000 }), (ids) => {
        const table = makeTable();
        const map = new Map<string, number>();
        for (const id of ids) {
          const expected = map.get(id) ?? -1;
          const bytes = Buffer.from(`"${id}"`);
          expect(table.findOrAdd(bytes, 1, bytes.length - 1)).toBe(expected);
          if (expected < 0) map.set(id, map.size);
        }
        expect(table.count).toBe(map.size);
        for (const [id, index] of map) {
          expect(table.findString(id)).toBe(index);
          expect(table.text(index)).toBe(id);
        }
      }),
      { numRuns: 40, seed: 5 },
    );
    const table = makeTable();
    for (let i = 0; i < 50_000; i += 1) table.findOrAddString(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    expect(table.count).toBe(50_000);
    expect(table.findString('00000000-0000-4000-8000-00000000c350')).toBe(-1);
    expect(table.findString('00000000-0000-4000-8000-00000000c34f')).toBe(49_999);
    expect(table.text(12_345)).toBe(`00000000-0000-4000-8000-${(12_345).toString(16).padStart(12, '0')}`);
  });

  it('keeps canonical uuids compactly and tells them from ids that only look like one', () => {
    const table = makeTable();
    const uuid = 'f47ac10b-58cc-4372-a567-0e02b2c3d479';
    const lookalikes = [uuid.toUpperCase(), uuid.replace('-', '_'), `${uuid.slice(0, 35)}g`, uuid.slice(0, 35), `${uuid}0`, uuid.replace('f', '\u00e9'), 'ffffffff-ffff-ffff-ffff-fffffffffff/'];
    expect(table.findOrAddString(uuid)).toBe(-1);
    for (const id of lookalikes) expect(table.findOrAddString(id), id).toBe(-1);
    expect(table.findOrAddString('ffffffff-ffff-ffff-ffff-ffffffffffff')).toBe(-1);
    expect(table.count).toBe(2 + lookalikes.length);
    expect(table.findString(uuid)).toBe(0);
    expect(table.text(0)).toBe(uuid);
    lookalikes.forEach((id, i) => {
      expect(table.findString(id)).toBe(i + 1);
      expect(table.text(i + 1)).toBe(id);
    });
    expect(table.text(lookalikes.length + 1)).toBe('ffffffff-ffff-ffff-ffff-ffffffffffff');
    const line = Buffer.from(`{"parentUuid":"${uuid}"}`);
    expect(table.equals(0, line, 15, 51)).toBe(true);
    expect(table.equals(1, line, 15, 51)).toBe(false);
    // Random uuids: every one comes back exactly, from bytes or strings, through growth.
    const many = Array.from({ length: 5000 }, () => crypto.randomUUID());
    const big = makeTable(16);
    for (const id of many) expect(big.findOrAdd(Buffer.from(id), 0, 36)).toBe(-1);
    many.forEach((id, i) => {
      expect(big.findOrAdd(Buffer.from(id), 0, 36)).toBe(i);
      expect(big.findString(id)).toBe(i);
      expect(big.text(i)).toBe(id);
    });
  });
});

describe('WasmIdTable in the reader memory', () => {
  it('reads ids where the scanner holds them, keeps them through memory growth, and agrees with IdTable', () => {
    const scanner = JsonScanner.create(1 << 16)!;
    const chunk = scanner.chunk();
    const wasm = scanner.idTable(16);
    const plain = new IdTable(16);
    let state = 7;
    const random = (): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 4294967296;
    };
    // Uuids, lookalikes and other ids, many repeated; written into the chunk region and read there.
    const pool = Array.from({ length: 3000 }, (_, i) =>
      i % 3 === 0 ? crypto.randomUUID() : i % 3 === 1 ? `msg_${i.toString(36)}\u00e9${'x'.repeat(i % 40)}` : crypto.randomUUID().toUpperCase(),
    );
    for (let round = 0; round < 40_000; round += 1) {
      const id = pool[Math.floor(random() * pool.length)]!;
      const at = Math.floor(random() * 1000);
      const length = chunk.write(id, at, 'utf8');
      expect(wasm.findOrAdd(chunk, at, at + length)).toBe(plain.findOrAddString(id));
    }
    expect(wasm.count).toBe(plain.count);
    expect(wasm.count).toBeGreaterThan(2900);
    for (let i = 0; i < plain.count; i += 1) {
      const id = plain.text(i);
      expect(wasm.text(i)).toBe(id);
      expect(wasm.findString(id)).toBe(i);
      const length = chunk.write(id, 100, 'utf8');
      expect(wasm.equals(i, chunk, 100, 100 + length)).toBe(true);
      expect(wasm.equals((i + 1) % plain.count, chunk, 100, 100 + length)).toBe(false);
    }
    expect(wasm.findString('not there')).toBe(-1);
    // A long id (longer than the copy area) from a string.
    const long = 'y'.repeat(10_000);
    expect(wasm.findOrAddString(long)).toBe(-1);
    expect(wasm.findString(long)).toBe(wasm.count - 1);
    expect(wasm.text(wasm.count - 1)).toBe(long);
  });

  it('starts empty after the scanner is reset, in memory the dropped tables used', () => {
    const scanner = JsonScanner.create(1 << 16)!;
    const ids = Array.from({ length: 20_000 }, () => crypto.randomUUID());
    const first = scanner.idTable(16);
    for (const id of ids) first.findOrAddString(id);
    first.findOrAddString('msg_pooled');
    expect(first.count).toBe(20_001);
    scanner.reset();
    const second = scanner.idTable(16);
    expect(second.count).toBe(0);
    for (const id of [...ids.slice(0, 100), 'msg_pooled']) expect(second.findString(id)).toBe(-1);
    expect(second.findOrAddString(ids[5]!)).toBe(-1);
    expect(second.findOrAddString('msg_pooled')).toBe(-1);
    expect(second.findString(ids[5]!)).toBe(0);
    expect(second.text(1)).toBe('msg_pooled');
    expect(second.count).toBe(2);
  });
});
