import { InputError } from '../../core/errors.js';

/** How a transcript's bytes are encoded (the output of redaction is always UTF-8). */
export type TextEncodingName = 'utf-8' | 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be';

/** Bytes looked at to decide the encoding when there is no byte-order mark. */
const SNIFF_BYTES = 4096;

/**
 * The encoding of a file from its first bytes: a byte-order mark when there is one,
 * else the pattern of zero bytes (JSON text is mostly ASCII, so UTF-16 puts a zero in
 * every other byte and UTF-32 three in every four). `bomBytes` is the BOM's length.
 * Returns null for bytes that hold zeros in no recognisable pattern (binary data).
 */
export function sniffEncoding(head: Uint8Array): { encoding: TextEncodingName; bomBytes: number } | null {
  const b = head;
  if (b.length >= 4 && b[0] === 0xff && b[1] === 0xfe && b[2] === 0 && b[3] === 0) return { encoding: 'utf-32le', bomBytes: 4 };
  if (b.length >= 4 && b[0] === 0 && b[1] === 0 && b[2] === 0xfe && b[3] === 0xff) return { encoding: 'utf-32be', bomBytes: 4 };
  if (b.length >= 2 && b[0] === 0xff && b[1] === 0xfe) return { encoding: 'utf-16le', bomBytes: 2 };
  if (b.length >= 2 && b[0] === 0xfe && b[1] === 0xff) return { encoding: 'utf-16be', bomBytes: 2 };
  const n = Math.min(b.length, SNIFF_BYTES);
  const zerosAt = [0, 0, 0, 0];
  let zeros = 0;
  for (let i = 0; i < n; i++) {
    if (b[i] === 0) {
      zeros++;
      zerosAt[i % 4]!++;
    }
  }
  if (zeros === 0) return { encoding: 'utf-8', bomBytes: 0 };
  const quarter = n / 4;
  const [z0, z1, z2, z3] = zerosAt as [number, number, number, number];
  // Mostly-ASCII text: the zero lanes are (nearly) full, the others (nearly) empty.
  const full = (count: number) => count >= 0.6 * quarter;
  const empty = (count: number) => count <= 0.1 * quarter;
  if (full(z1) && full(z2) && full(z3) && empty(z0)) return { encoding: 'utf-32le', bomBytes: 0 };
  if (full(z0) && full(z1) && full(z2) && empty(z3)) return { encoding: 'utf-32be', bomBytes: 0 };
  if (full(z1) && full(z3) && empty(z0) && empty(z2)) return { encoding: 'utf-16le', bomBytes: 0 };
  if (full(z0) && full(z2) && empty(z1) && empty(z3)) return { encoding: 'utf-16be', bomBytes: 0 };
  return null;
}

/** Decodes UTF-32 (which TextDecoder does not know) across chunk boundaries. */
class Utf32Decoder {
  private carry = new Uint8Array(0);
  constructor(private readonly littleEndian: boolean) {}

  decode(chunk: Uint8Array, final: boolean): string {
    const bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    const whole = bytes.length - (bytes.length % 4);
    const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    const parts: string[] = [];
    let codes: number[] = [];
    for (let i = 0; i < whole; i += 4) {
      const cp = view.getUint32(i, this.littleEndian);
      codes.push(cp <= 0x10ffff && (cp < 0xd800 || cp > 0xdfff) ? cp : 0xfffd);
      if (codes.length === 8192) {
        parts.push(String.fromCodePoint(...codes));
        codes = [];
      }
    }
    if (codes.length > 0) parts.push(String.fromCodePoint(...codes));
    this.carry = bytes.slice(whole);
    if (final && this.carry.length > 0) {
      parts.push('\uFFFD');
      this.carry = new Uint8Array(0);
    }
    return parts.join('');
  }
}

/**
 * Turns a byte stream in any supported encoding into UTF-8 bytes (UTF-8 passes through
 * untouched, so its invalid bytes are still seen downstream). The encoding is decided
 * from the first bytes and reported through `onEncoding`. A file that holds zero bytes
 * in no text pattern — binary data, or an encoding we cannot read — is an InputError:
 * nothing may be passed on undecoded and later called clean.
 */
export async function* asUtf8(
  path: string,
  chunks: AsyncIterable<Buffer>,
  onEncoding: (encoding: TextEncodingName) => void = () => undefined,
): AsyncGenerator<Buffer> {
  let head: Buffer[] = [];
  let headBytes = 0;
  let encoding: TextEncodingName | null = null;
  let textDecoder: InstanceType<typeof TextDecoder> | null = null;
  let utf32: Utf32Decoder | null = null;
  let offset = 0;

  const convert = (bytes: Buffer, final: boolean): Buffer => {
    if (encoding === 'utf-8') {
      const zero = bytes.indexOf(0);
      if (zero >= 0) {
        throw new InputError(
          `NUL byte at byte ${offset + zero}: not a UTF-8 text file (a UTF-16 or UTF-32 transcript is read when it starts with a byte-order mark or is mostly ASCII; convert other encodings to UTF-8 first)`,
          { file: path },
        );
      }
      offset += bytes.length;
      return bytes;
    }
    offset += bytes.length;
    const text = utf32 !== null ? utf32.decode(bytes, final) : textDecoder!.decode(bytes, { stream: !final });
    return Buffer.from(text, 'utf8');
  };

  const decide = (bytes: Buffer) => {
    const sniffed = sniffEncoding(bytes);
    if (sniffed === null) {
      throw new InputError('binary data or an unknown text encoding (zero bytes in no UTF-16/UTF-32 pattern); only UTF-8, UTF-16 and UTF-32 text is read', {
        file: path,
      });
    }
    encoding = sniffed.encoding;
    onEncoding(encoding);
    if (encoding === 'utf-16le' || encoding === 'utf-16be') textDecoder = new TextDecoder(encoding, { ignoreBOM: true });
    if (encoding === 'utf-32le' || encoding === 'utf-32be') utf32 = new Utf32Decoder(encoding === 'utf-32le');
    offset = sniffed.bomBytes;
    return bytes.subarray(sniffed.bomBytes);
  };

  for await (const chunk of chunks) {
    if (encoding === null) {
      head.push(chunk);
      headBytes += chunk.length;
      if (headBytes < SNIFF_BYTES) continue;
      const first = decide(Buffer.concat(head, headBytes));
      head = [];
      yield convert(first, false);
      continue;
    }
    yield convert(chunk, false);
  }
  if (encoding === null) {
    const all = Buffer.concat(head, headBytes);
    if (all.length === 0) return;
    yield convert(decide(all), true);
    return;
  }
  if (encoding !== 'utf-8') {
    const rest = convert(Buffer.alloc(0), true);
    if (rest.length > 0) yield rest;
  }
}
