// AssemblyScript, compiled to WebAssembly by tools/build-wasm.mjs (not part of the TypeScript build).
//
// Stage one of reading a JSON line: finds every string delimiter (unescaped quote) with
// 128-bit SIMD, 64 bytes at a time, and checks the content of every string the way
// JSON.parse would (no raw control character, only the nine escapes, four hex digits
// after \u). The escape and in-string masks follow the bit tricks published for
// simdjson (Langdale & Lemire, "Parsing gigabytes of JSON per second", 2019).
//
// Input: the line at [src, src + length); the 64 bytes after it must be readable memory
// (they are read and ignored).
// Output: u32 positions of the quotes at `out`, opening and closing alternately; a
// closing quote has bit 31 set when its string holds an escape. Returns the number of
// quotes, or -1 when a string is malformed or unterminated or a backslash stands outside
// strings (the line is then not JSON).

const ODD_BITS: u64 = 0xaaaaaaaaaaaaaaaa;
const HAS_ESCAPE: u32 = 0x80000000;

export function heapBase(): usize {
  return __heap_base;
}

@inline function bits(a: v128, b: v128, c: v128, d: v128): u64 {
  return (
    <u64>i8x16.bitmask(a) |
    (<u64>i8x16.bitmask(b) << 16) |
    (<u64>i8x16.bitmask(c) << 32) |
    (<u64>i8x16.bitmask(d) << 48)
  );
}

@inline function isHex(c: u32): bool {
  return (c - 0x30 < 10) || ((c | 0x20) - 0x61 < 6);
}

const letterU = i8x16.splat(0x75);
const lowNibble = i8x16.splat(0x0f);
// Bytes allowed after a backslash: " / \ b f n r t u. A byte is allowed when the bit its high
// nibble selects is set in the entry of its low nibble (high 2 → bit 1, 5 → 2, 6 → 4, 7 → 8).
const ESCAPE_BY_HIGH = i8x16(0, 0, 1, 0, 0, 2, 4, 8, 0, 0, 0, 0, 0, 0, 0, 0);
const ESCAPE_BY_LOW = i8x16(0, 0, 1 | 4 | 8, 0, 8, 8, 4, 0, 0, 0, 0, 0, 2, 0, 4, 1);

/** Lanes holding a byte that may follow a backslash in JSON (nonzero lanes). */
@inline function escapable(v: v128): v128 {
  const high = i8x16.shr_u(v, 4);
  const low = v128.and(v, lowNibble);
  return i8x16.ne(v128.and(i8x16.swizzle(ESCAPE_BY_HIGH, high), i8x16.swizzle(ESCAPE_BY_LOW, low)), i8x16.splat(0));
}

/** Whether the escape sequence whose escaped byte is at p is one JSON allows. */
function validEscape(p: usize): bool {
  const c = <u32>load<u8>(p);
  if (c == 0x75) {
    return isHex(<u32>load<u8>(p + 1)) && isHex(<u32>load<u8>(p + 2)) && isHex(<u32>load<u8>(p + 3)) && isHex(<u32>load<u8>(p + 4));
  }
  return c == 0x22 || c == 0x5c || c == 0x2f || c == 0x62 || c == 0x66 || c == 0x6e || c == 0x72 || c == 0x74;
}

export function scanQuotes(src: usize, length: i32, out: usize): i32 {
  const quote = i8x16.splat(0x22);
  const backslash = i8x16.splat(0x5c);
  const space = i8x16.splat(0x20);
  // The byte after the previous block's last byte is escaped (1) or not (0).
  let carryEscaped: u64 = 0;
  // All ones while the previous block ended inside a string.
  let carryInString: u64 = 0;
  let inString = false;
  let sawEscape = false;
  let count = 0;
  for (let at = 0; at < length; at += 64) {
    const p = src + <usize>at;
    const a = v128.load(p);
    const b = v128.load(p, 16);
    const c = v128.load(p, 32);
    const d = v128.load(p, 48);
    // A full block without a quote, backslash or control byte changes nothing but what a
    // backslash at the end of the previous block escapes (common in long texts).
    if (length - at >= 64) {
      const special = v128.or(
        v128.or(v128.or(i8x16.eq(a, quote), i8x16.eq(a, backslash)), v128.or(i8x16.eq(b, quote), i8x16.eq(b, backslash))),
        v128.or(v128.or(i8x16.eq(c, quote), i8x16.eq(c, backslash)), v128.or(i8x16.eq(d, quote), i8x16.eq(d, backslash))),
      );
      const low = v128.or(v128.or(i8x16.lt_u(a, space), i8x16.lt_u(b, space)), v128.or(i8x16.lt_u(c, space), i8x16.lt_u(d, space)));
      if (!v128.any_true(v128.or(special, low))) {
        if (carryEscaped != 0) {
          // The backslash was checked (inside a string, noted in sawEscape) in its own block.
          if (!validEscape(p)) return -1;
          carryEscaped = 0;
        }
        continue;
      }
    }
    // The last block reads past the line (whatever follows it): those bytes are masked off.
    const inLine: u64 = length - at >= 64 ? ~(<u64>0) : (<u64>1 << <u64>(length - at)) - 1;
    const quotes = inLine & bits(i8x16.eq(a, quote), i8x16.eq(b, quote), i8x16.eq(c, quote), i8x16.eq(d, quote));
    const slashes = inLine & bits(i8x16.eq(a, backslash), i8x16.eq(b, backslash), i8x16.eq(c, backslash), i8x16.eq(d, backslash));
    const controls = inLine & bits(i8x16.lt_u(a, space), i8x16.lt_u(b, space), i8x16.lt_u(c, space), i8x16.lt_u(d, space));
    // escaped: bytes preceded by an odd run of backslashes; escape: the backslashes that escape them.
    let escaped: u64 = carryEscaped;
    let escape: u64 = 0;
    if (slashes != 0) {
      const potential = slashes & ~carryEscaped;
      const code = (((potential << 1) | ODD_BITS) - potential) ^ ODD_BITS;
      escaped = code ^ (slashes | carryEscaped);
      escape = code & slashes;
      carryEscaped = escape >> 63;
    } else {
      carryEscaped = 0;
    }
    const delimiters = quotes & ~escaped;
    // Prefix XOR: ones from each opening quote up to (not including) its closing quote.
    let inside = delimiters;
    inside ^= inside << 1;
    inside ^= inside << 2;
    inside ^= inside << 4;
    inside ^= inside << 8;
    inside ^= inside << 16;
    inside ^= inside << 32;
    inside ^= carryInString;
    carryInString = <u64>(<i64>inside >> 63);
    // A raw control byte in a string, or a backslash outside one: not JSON.
    if ((controls & inside) != 0 || (escape & ~inside) != 0) return -1;
    if (escaped != 0) {
      // The escaped byte must be one of " \ / b f n r t u; checked for the whole block at once.
      const allowed = bits(escapable(a), escapable(b), escapable(c), escapable(d));
      if ((escaped & ~allowed) != 0) return -1;
      // \u needs four hex digits: rare enough to check one by one.
      let unicode = escaped & bits(i8x16.eq(a, letterU), i8x16.eq(b, letterU), i8x16.eq(c, letterU), i8x16.eq(d, letterU));
      while (unicode != 0) {
        if (!validEscape(p + <usize>ctz(unicode))) return -1;
        unicode &= unicode - 1;
      }
    }
    let rest = delimiters;
    // Bits of this block after the previous delimiter.
    let after: u64 = ~(<u64>0);
    while (rest != 0) {
      const k = <i32>ctz(rest);
      const bit: u64 = <u64>1 << <u64>k;
      if (inString) {
        if ((escape & after & (bit - 1)) != 0) sawEscape = true;
        store<u32>(out + (<usize>count << 2), <u32>(at + k) | (sawEscape ? HAS_ESCAPE : 0));
        sawEscape = false;
        inString = false;
      } else {
        store<u32>(out + (<usize>count << 2), <u32>(at + k));
        inString = true;
      }
      count += 1;
      after = k == 63 ? 0 : ~((bit << 1) - 1);
      rest &= rest - 1;
    }
    if (inString && (escape & after) != 0) sawEscape = true;
  }
  return inString ? -1 : count;
}
