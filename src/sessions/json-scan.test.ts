import { execFileSync } from 'node:child_process';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { HAS_ESCAPE, MAX_SCAN_BYTES, JsonScanner } from './json-scan.js';

/** What the scanner must find, written the slow obvious way: walk the bytes, track strings and escapes. */
function oracle(bytes: Uint8Array): number[] | -1 {
  const out: number[] = [];
  let inString = false;
  let escaped = false;
  for (let i = 0; i < bytes.length; i += 1) {
    const c = bytes[i]!;
    if (!inString) {
      if (c === 0x5c) return -1;
      if (c === 0x22) {
        out.push(i);
        inString = true;
        escaped = false;
      }
      continue;
    }
    if (c < 0x20) return -1;
    if (c === 0x5c) {
      const e = bytes[i + 1];
      if (e === 0x75) {
        for (let h = 2; h <= 5; h += 1) {
          const x = bytes[i + h];
          if (x === undefined || !/[0-9a-fA-F]/.test(String.fromCharCode(x))) return -1;
        }
        i += 5;
      } else if (e !== undefined && '"\\/bfnrt'.includes(String.fromCharCode(e))) i += 1;
      else return -1;
      escaped = true;
      continue;
    }
    if (c === 0x22) {
      out.push(i + (escaped ? HAS_ESCAPE : 0));
      inString = false;
    }
  }
  return inString ? -1 : out;
}

function scanned(scanner: JsonScanner, bytes: Uint8Array): number[] | -1 {
  const count = scanner.scan(bytes);
  if (count < 0) return -1;
  return Array.from(scanner.positions.subarray(0, count));
}

describe('JsonScanner (WebAssembly SIMD)', () => {
  const scanner = JsonScanner.create();

  it('loads on Node 20', () => {
    expect(scanner).toBeDefined();
  });

  it('finds string delimiters and escape flags, and rejects what JSON.parse rejects inside strings', () => {
    const cases: Array<[string, number[] | -1]> = [
      ['{"a":"b"}', [1, 3, 5, 7]],
      ['{"a\\"b":1}', [1, 6 + HAS_ESCAPE]],
      ['"\\\\"', [0, 3 + HAS_ESCAPE]],
      ['"\\u00e9x"', [0, 8 + HAS_ESCAPE]],
      ['"tab\tinside"', -1],
      ['"bad \\q escape"', -1],
      ['"short \\u12"', -1],
      ['"unterminated', -1],
      ['{}', []],
      ['\\"a"', -1],
      // A raw control byte outside strings is for the structure reader to judge.
      ['{\t"a":1}', [2, 4]],
    ];
    for (const [text, expected] of cases) expect(scanned(scanner!, Buffer.from(text)), text).toEqual(expected);
  });

  it('agrees with the byte-by-byte oracle on random text around 64-byte block edges', () => {
    const alphabet = ['"', '\\', 'a', 'u', '0', 'F', 'n', 'b', 'f', 'r', 't', '/', 'R', 'd', '~', '_', ' ', '\t', '\u00e9', '{', ':', ','];
    fc.assert(
      fc.property(fc.array(fc.constantFrom(...alphabet), { minLength: 0, maxLength: 300 }), (chars) => {
        const bytes = Buffer.from(chars.join(''), 'utf8');
        expect(scanned(scanner!, bytes)).toEqual(oracle(bytes));
      }),
      { numRuns: 3000, seed: 17 },
    );
  });

  it('agrees with the oracle when an escape straddles a quiet 64-byte block (no quote, backslash or control byte)', () => {
    for (let k = 50; k < 140; k += 1) {
      for (const sequence of ['\\n', '\\q', '\\u00e9', '\\u00g9', '\\\\', '\\"']) {
        const text = `{"a":"${'x'.repeat(k)}${sequence}${'y'.repeat(150)}","b":"${'z'.repeat(k)}"}`;
        const bytes = Buffer.from(text);
        expect(scanned(scanner!, bytes), `${k} ${sequence}`).toEqual(oracle(bytes));
      }
    }
  });

  it('agrees with the oracle on serialized JSON values (always valid) and on their truncations', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 3 }), fc.nat(), (value, cut) => {
        const bytes = Buffer.from(JSON.stringify(value), 'utf8');
        expect(scanned(scanner!, bytes)).toEqual(oracle(bytes));
        const head = bytes.subarray(0, bytes.length === 0 ? 0 : cut % bytes.length);
        expect(scanned(scanner!, head)).toEqual(oracle(head));
      }),
      { numRuns: 1500, seed: 23 },
    );
  });

  it('grows for long lines and refuses lines over its limit', () => {
    const long = Buffer.from(JSON.stringify({ text: `${'x\\"y\n'.repeat(100_000)}` }));
    expect(scanned(scanner!, long)).toEqual(oracle(long));
    expect(scanner!.scan(new Uint8Array(MAX_SCAN_BYTES + 1))).toBe(-2);
    // A short line after a long one still scans (the padding is rewritten each time).
    expect(scanned(scanner!, Buffer.from('"a"'))).toEqual([0, 2]);
  });

  it('the committed module is what wasm/*.ts compile to', () => {
    const output = execFileSync(process.execPath, ['tools/build-wasm.mjs', '--check'], { encoding: 'utf8' });
    expect(output).toContain('matches');
  }, 60_000);
});
