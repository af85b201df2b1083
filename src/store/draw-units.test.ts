import { describe, expect, it } from 'vitest';
import { simSeedOf } from '../models/sim-adapter.js';
import type { ModelRequest } from '../models/types.js';
import { encodeRequest } from './blobs.js';
import { countSharedDraws, separateUnitDraws } from './draw-units.js';
import { canonicalRequest, cellIdentity, cellKey, contentKey } from './keys.js';
import { requestKeys } from './request-hash.js';
import type { CellSpec } from './types.js';

const request = (content: string, sample = 0): ModelRequest => ({
  model: 'sim:persona',
  messages: [
    { role: 'system', content: 'You are a coding assistant.' },
    { role: 'user', content },
  ],
  params: { temperature: 1 },
  sample,
});

describe('request.unit (draw salt)', () => {
  it('enters the key and content key only when set, and every hasher agrees', () => {
    const plain = request('filler text');
    const salted = { ...plain, unit: 'S2' };
    expect(cellKey(salted)).not.toBe(cellKey(plain));
    expect(contentKey(salted)).not.toBe(contentKey(plain));
    expect(cellKey({ ...plain, unit: 'S3' })).not.toBe(cellKey(salted));
    // An absent unit changes nothing: this is the key every earlier run stored.
    expect(cellKey(plain)).toBe(cellIdentity(plain).key);
    for (const r of [plain, salted, { ...salted, tools: [{ name: 'read', inputSchema: { type: 'object' } }], toolChoice: 'auto' as const }]) {
      const id = cellIdentity(r);
      const incremental = requestKeys(r);
      expect(incremental.key).toBe(id.key);
      expect(incremental.contentKey).toBe(id.contentKey);
      expect(id.key).toBe(cellKey(r));
      expect(JSON.parse(encodeRequest(r).json)).toEqual(JSON.parse(id.json));
    }
    expect(canonicalRequest(salted).unit).toBe('S2');
    expect(JSON.parse(cellIdentity(salted).json).unit).toBe('S2');
  });

  it('rejects an empty unit', () => {
    expect(() => cellKey({ ...request('x'), unit: '' })).toThrow(/request.unit/);
  });

  it('gives a simulated model a different seed per unit (and the old seed without one)', () => {
    const plain = request('x');
    expect(simSeedOf({ ...plain, unit: 'S1' })).not.toBe(simSeedOf({ ...plain, unit: 'S2' }));
    expect(simSeedOf({ ...plain, unit: 'S1' })).not.toBe(simSeedOf(plain));
    expect(simSeedOf(plain)).toBe(simSeedOf({ ...plain }));
  });
});

describe('separateUnitDraws', () => {
  const spec = (content: string, session: string, sample = 0): CellSpec => ({ request: request(content, sample), labels: { session } });
  const bySession = (s: CellSpec) => String(s.labels.session);

  it('salts exactly the requests that arise in more than one unit', () => {
    const specs = [
      spec('filler of 400 chars', 'S1'),
      spec('filler of 400 chars', 'S2'),
      spec('real context of S1', 'S1'),
      spec('real context of S2', 'S2'),
      spec('scratch', 'S1'),
      spec('scratch', 'S1', 1),
      spec('scratch', 'S2'),
      spec('only in S1, twice', 'S1'),
      spec('only in S1, twice', 'S1'),
    ];
    expect(countSharedDraws(specs, bySession)).toBe(2);
    const out = separateUnitDraws(specs, bySession);
    expect(out.sharedRequests).toBe(2);
    expect(out.saltedCells).toBe(4);
    expect(out.unitsInvolved).toEqual(['S1', 'S2']);
    expect(out.specs.map((s) => s.request.unit ?? null)).toEqual(['S1', 'S2', null, null, 'S1', null, 'S2', null, null]);
    // Unsalted specs are the same objects: their keys (and a resumed run's cells) are unchanged.
    expect(out.specs[2]).toBe(specs[2]);
    expect(out.specs[7]).toBe(specs[7]);
    expect(countSharedDraws(out.specs, bySession)).toBe(0);
    // Within one unit, repeats still share (that is the unit's own business).
    expect(cellKey(out.specs[7]!)).toBe(cellKey(out.specs[8]!));
    // Labels are kept, and the input is not mutated.
    expect(out.specs[1]!.labels).toEqual({ session: 'S2' });
    expect(specs[1]!.request.unit).toBeUndefined();
  });

  it('changes nothing in a design without collisions', () => {
    const specs = [spec('a', 'S1'), spec('b', 'S2'), spec('a', 'S1', 1)];
    const out = separateUnitDraws(specs, bySession);
    expect(out.sharedRequests).toBe(0);
    expect(out.specs.map(cellKey)).toEqual(specs.map(cellKey));
  });
});
