import { JSON_QUOTES_WASM_BASE64 } from './json-quotes-wasm.js';

/**
 * Finds the string delimiters of one JSON line and checks every string's content, with
 * the SIMD scanner in `wasm/json-quotes.ts`. The caller walks the structure between the
 * strings; it never has to look inside one. See that file for the output format.
 */

/** Bit set on a closing quote whose string holds an escape. */
export const HAS_ESCAPE = 0x80000000;
/** Longer lines are not scanned here (the scanner's memory would grow with them). */
export const MAX_SCAN_BYTES = 4 * 1024 * 1024;
const PAD = 64;
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
}

export class QuoteScanner {
  /** Quote positions of the last scanned line, from index 0 (a view: valid until the next scan). */
  positions: Uint32Array;
  private bytes: Uint8Array;
  private readonly src: number;
  private out = 0;
  private capacity = 0;

  private constructor(private readonly exports: Exports) {
    this.src = (exports.heapBase() + 15) & ~15;
    this.bytes = new Uint8Array(0);
    this.positions = new Uint32Array(0);
    this.reserve(64 * 1024);
  }

  /** A scanner, or undefined where WebAssembly SIMD is not available (callers then parse with JSON.parse). */
  static create(): QuoteScanner | undefined {
    try {
      const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
      const module = new wasm.Module(Buffer.from(JSON_QUOTES_WASM_BASE64, 'base64'));
      const instance = new wasm.Instance(module, {});
      return new QuoteScanner(instance.exports as unknown as Exports);
    } catch {
      return undefined;
    }
  }

  /** Number of quotes in `line`; -1 when it is not JSON (a malformed or unterminated string, a backslash outside strings); -2 when the line is too long to scan. */
  scan(line: Uint8Array): number {
    const length = line.length;
    if (length > MAX_SCAN_BYTES) return -2;
    if (length > this.capacity) this.reserve(length);
    this.bytes.set(line, this.src);
    this.bytes.fill(0x20, this.src + length, this.src + length + PAD);
    return this.exports.scanQuotes(this.src, length, this.out);
  }

  private reserve(length: number): void {
    let capacity = Math.max(this.capacity, 64 * 1024);
    while (capacity < length) capacity *= 2;
    capacity = Math.min(capacity, MAX_SCAN_BYTES);
    const out = (this.src + capacity + PAD + 15) & ~15;
    const end = out + 4 * (capacity + PAD);
    const memory = this.exports.memory;
    if (end > memory.buffer.byteLength) memory.grow(Math.ceil((end - memory.buffer.byteLength) / PAGE));
    this.capacity = capacity;
    this.out = out;
    this.bytes = new Uint8Array(memory.buffer);
    this.positions = new Uint32Array(memory.buffer, out, capacity + PAD);
  }
}
