import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { IdTable } from './id-table.js';

describe('IdTable', () => {
  it('numbers ids in insertion order and finds them again, from bytes or strings', () => {
    const table = new IdTable();
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
        const table = new IdTable();
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
    const table = new IdTable();
    for (let i = 0; i < 50_000; i += 1) table.findOrAddString(`00000000-0000-4000-8000-${i.toString(16).padStart(12, '0')}`);
    expect(table.count).toBe(50_000);
    expect(table.findString('00000000-0000-4000-8000-00000000c350')).toBe(-1);
    expect(table.findString('00000000-0000-4000-8000-00000000c34f')).toBe(49_999);
    expect(table.text(12_345)).toBe(`00000000-0000-4000-8000-${(12_345).toString(16).padStart(12, '0')}`);
  });
});
