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
  skimClaude(src: number, length: number, quoteArea: number, output: number): number;
  FIELD_SLOTS: { value: number };
}

export class JsonScanner {
  /** Quote positions of the last scanned line, from index 0 (a view: valid until the next scan). */
  positions: Uint32Array;
  /** Slots written by the last `skimClaude` (a view over the module's memory). */
  fields: Int32Array;
  private bytes: Uint8Array;
  private readonly src: number;
  private out = 0;
  private output = 0;
  private capacity = 0;

  private constructor(private readonly exports: Exports) {
    this.src = (exports.heapBase() + 15) & ~15;
    this.bytes = new Uint8Array(0);
    this.positions = new Uint32Array(0);
    this.fields = new Int32Array(0);
    if (exports.FIELD_SLOTS.value !== CLAUDE_FIELD_SLOTS) throw new Error('json-scan-wasm.ts does not match json-scan.ts');
    this.reserve(64 * 1024);
  }

  /** A scanner, or undefined where WebAssembly SIMD is not available (callers then parse with JSON.parse). */
  static create(): JsonScanner | undefined {
    try {
      const wasm = (globalThis as unknown as { WebAssembly: WasmApi }).WebAssembly;
      const module = new wasm.Module(Buffer.from(JSON_SCAN_WASM_BASE64, 'base64'));
      const instance = new wasm.Instance(module, {});
      return new JsonScanner(instance.exports as unknown as Exports);
    } catch {
      return undefined;
    }
  }

  /** Number of quotes in `line`; -1 when it is not JSON (a malformed or unterminated string, a backslash outside strings); -2 when the line is too long to scan. */
  scan(line: Uint8Array): number {
    if (!this.load(line)) return -2;
    return this.exports.scanQuotes(this.src, line.length, this.out);
  }

  /** SKIM_OK when `fields` describe the Claude Code record in `line`; anything else means "parse it with JSON.parse". */
  skimClaude(line: Uint8Array): number {
    if (!this.load(line)) return -2;
    return this.exports.skimClaude(this.src, line.length, this.out, this.output);
  }

  private load(line: Uint8Array): boolean {
    const length = line.length;
    if (length > MAX_SCAN_BYTES) return false;
    if (length > this.capacity) this.reserve(length);
    this.bytes.set(line, this.src);
    this.bytes.fill(0x20, this.src + length, this.src + length + PAD);
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
