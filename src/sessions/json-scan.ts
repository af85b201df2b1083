import { JSON_SCAN_WASM_BASE64 } from './json-scan-wasm.js';

/**
 * JSON line readers compiled to WebAssembly from `wasm/` (see those files for the output
 * formats): `scan` finds the string delimiters of a line with SIMD and checks every
 * string's content; `skimClaude` also walks the whole line as JSON and tells where the
 * fields of a Claude Code record are, so the caller decodes only what it needs.
 */

/** Bit set on a closing quote whose string holds an escape. */
export const HAS_ESCAPE = 0x80000000;
/** Longer lines are not scanned here (the scanner's memory would grow with them). */
export const MAX_SCAN_BYTES = 4 * 1024 * 1024;

/** Results of `skimClaude`. */
export const SKIM_OK = 1;
/** Slots of `skimClaude` (three i32 each: kind, start, end): the fields, the block count, then the blocks. */
export const CLAUDE_FIELD_SLOTS = 26;
export const BLOCK_SLOTS = 5;
const MAX_BLOCKS = 256;
const OUTPUT_BYTES = (CLAUDE_FIELD_SLOTS + 1 + MAX_BLOCKS * BLOCK_SLOTS) * 12;
const PAD = 64;
/** Compiled once per process; each scanner is an instance with its own memory. */
let compiled: object | undefined;
const PAGE = 65536;

/** The part of the WebAssembly API used here (its types live in lib.dom, which this project does not load). */
interface WasmMemory {
  buffer: ArrayBuffer;
  grow(pages: number): number;
}
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

interface Exports {
  memory: WasmMemory;
  heapBase(): number;
  scanQuotes(src: number, length: number, out: number): number;
  skimClaude(src: number, length: number, quoteArea: number, output: number, offset: number): number;
  FIELD_SLOTS: { value: number };
}

export class JsonScanner {
  /** Quote positions of the last scanned line, from index 0 (a view: valid until the next scan). */
  positions: Uint32Array;
  /** Slots written by the last `skimClaude` (a view over the module's memory). */
  fields: Int32Array;
  private bytes: Uint8Array;
  /** Start of the file-chunk region (see `chunk`), then of the copy of one line. */
  private readonly chunkStart: number;
  private readonly src: number;
  private out = 0;
  private output = 0;
  private capacity = 0;

  private constructor(
    private readonly exports: Exports,
    private readonly chunkBytes: number,
  ) {
    this.chunkStart = (exports.heapBase() + 15) & ~15;
    this.src = chunkBytes > 0 ? (this.chunkStart + chunkBytes + PAD + 15) & ~15 : this.chunkStart;
    this.bytes = new Uint8Array(0);
    this.positions = new Uint32Array(0);
    this.fields = new Int32Array(0);
    if (exports.FIELD_SLOTS.value !== CLAUDE_FIELD_SLOTS) throw new Error('json-scan-wasm.ts does not match json-scan.ts');
    // With a chunk region the memory is laid out once for the longest line: growing it would detach `chunk()`.
    this.reserve(chunkBytes > 0 ? MAX_SCAN_BYTES : 64 * 1024);
  }

  /**
   * A scanner (with `chunkBytes` > 0, one that has a region for reading a file into: see
   * `chunk`), or undefined where WebAssembly SIMD is not available (callers then parse
   * with JSON.parse).
   */
  static create(chunkBytes = 0): JsonScanner | undefined {
    try {
      const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
      compiled ??= new wasm.Module(Buffer.from(JSON_SCAN_WASM_BASE64, 'base64'));
      const instance = new wasm.Instance(compiled, {});
      return new JsonScanner(instance.exports as unknown as Exports, chunkBytes);
    } catch {
      return undefined;
    }
  }

  /**
   * The region of the module's memory that a file can be read into, so lines are read where
   * they are (`skimClaudeIn`) instead of being copied. Its memory never moves.
   */
  chunk(): Buffer {
    return Buffer.from(this.exports.memory.buffer, this.chunkStart, this.chunkBytes);
  }

  /** Whether `buffer` is (part of) this scanner's chunk region. */
  holds(buffer: Uint8Array): boolean {
    return this.chunkBytes > 0 && buffer.buffer === this.exports.memory.buffer;
  }

  /** skimClaude for the bytes [start, end) of `buffer`, a view of `chunk()`, read in place; positions are in `buffer`. */
  skimClaudeIn(buffer: Uint8Array, start: number, end: number): number {
    const length = end - start;
    if (length > MAX_SCAN_BYTES) return -2;
    return this.exports.skimClaude(buffer.byteOffset + start, length, this.out, this.output, start);
  }

  /** Number of quotes in `line`; -1 when it is not JSON (a malformed or unterminated string, a backslash outside strings); -2 when the line is too long to scan. */
  scan(line: Uint8Array): number {
    if (!this.load(line)) return -2;
    return this.exports.scanQuotes(this.src, line.length, this.out);
  }

  /** SKIM_OK when `fields` describe the Claude Code record in `line`; anything else means "parse it with JSON.parse". */
  skimClaude(line: Uint8Array): number {
    if (!this.load(line)) return -2;
    return this.exports.skimClaude(this.src, line.length, this.out, this.output, 0);
  }

  private load(line: Uint8Array): boolean {
    const length = line.length;
    if (length > MAX_SCAN_BYTES) return false;
    if (length > this.capacity) this.reserve(length);
    // The scanner reads up to 64 bytes past the line and ignores them: no padding needed.
    this.bytes.set(line, this.src);
    return true;
  }

  private reserve(length: number): void {
    let capacity = Math.max(this.capacity, 64 * 1024);
    while (capacity < length) capacity *= 2;
    capacity = Math.min(capacity, MAX_SCAN_BYTES);
    const out = (this.src + capacity + PAD + 15) & ~15;
    const output = out + 4 * (capacity + PAD);
    const end = output + OUTPUT_BYTES;
    const memory = this.exports.memory;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
    this.capacity = capacity;
    this.out = out;
    this.output = output;
    this.bytes = new Uint8Array(memory.buffer);
    this.positions = new Uint32Array(memory.buffer, out, capacity + PAD);
    this.fields = new Int32Array(memory.buffer, output, OUTPUT_BYTES / 4);
  }
}
