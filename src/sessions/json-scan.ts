import { type IdTableExports, WasmIdTable } from './id-table-wasm.js';
import { JSON_SCAN_WASM_BASE64 } from './json-scan-wasm.js';

/**
 * JSON line readers compiled to WebAssembly from `wasm/` (see those files for the output
 * formats): `scan` finds the string delimiters of a line with SIMD and checks every
 * string's content; `skimClaude` also walks the whole line as JSON and tells where the
 * fields of a Claude Code record are, so the caller decodes only what it needs; `link`
 * then files the record's ids in id tables kept in the same memory (`idTable`).
 *
 * The module's memory is shared memory: growing it (id tables grow) never detaches the views
 * made of it, such as `chunk()`.
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
/** Where `link` writes its results in `fields` (parent, message number, flags). */
export const LINK_FIELD = (CLAUDE_FIELD_SLOTS + 1 + MAX_BLOCKS * BLOCK_SLOTS) * 3;
const OUTPUT_BYTES = (LINK_FIELD + 14) * 4;
/** Results of `link` (see wasm/claude-fields.ts linkRecord). */
export const LINK = { BY_CALLER: 0, ADDED: 1, DUPLICATE: 2 } as const;
/** Parent results of `link`, besides a record number. */
export const LINK_PARENT = { ROOT: -1, UNRESOLVED: -3, BY_CALLER: -4 } as const;
/** Flags of `link`: what the caller still has to read itself (VERSION: from `readRecord` only). */
export const LINK_FLAG = { TIMESTAMP: 1, MESSAGE_ID: 2, VERSION: 4 } as const;
/** Where `skimRecord…` leaves its results in `fields`, from LINK_FIELD (see wasm/claude-fields.ts readRecord). */
export const RECORD_RESULT = { FLAGS: 3, TYPE: 4, KIND: 5, STEPS: 6, MODEL: 7, TOOL: 8, USAGE: 9, INPUT: 10, OUTPUT: 11, CACHE_READ: 12, CACHE_CREATION: 13 } as const;
/** Results of `skimRecord…`: ≤ 0 the line was not read (JSON.parse it); else RECORD_READ + a LINK value (LINK.BY_CALLER: the slots are read, the record is the caller's). */
export const RECORD_READ = 10;
/** What a reader context still leaves to the caller (bits of `ReaderContext.needs`). */
export const NEED = { SUBAGENT: 1, SESSION_ID: 2, CWD: 4, FORK: 8 } as const;

/** The wasm side of one ClaudeParser: its tables and link state, and what it still leaves to JavaScript. */
export interface ReaderContext {
  readonly address: number;
  readonly uuids: WasmIdTable;
  readonly messages: WasmIdTable;
  readonly models: WasmIdTable;
  readonly tools: WasmIdTable;
  readonly state: number;
  /** i32 view of the context: [5] the NEED bits, [6] the kept version's length + 1 (write 0 when the caller sets the version). */
  readonly fields: Int32Array;
}
const CONTEXT_NEEDS = 5;
const CONTEXT_VERSION = 6;
const PAD = 64;
/** Compiled once per process; each scanner is an instance with its own memory. */
let compiled: object | undefined;
const PAGE = 65536;

/** The part of the WebAssembly API used here (its types live in lib.dom, which this project does not load). */
interface WasmApi {
  Module: new (bytes: Uint8Array) => object;
  Instance: new (module: object, imports: object) => { exports: unknown };
}

interface Exports extends IdTableExports {
  heapBase(): number;
  scanQuotes(src: number, length: number, out: number): number;
  skimClaude(src: number, length: number, quoteArea: number, output: number, offset: number): number;
  FIELD_SLOTS: { value: number };
  LINK_AREA: { value: number };
  tablesInit(base: number): void;
  linkStateNew(): number;
  linkRecord(state: number, uuids: number, messages: number, assistant: boolean): number;
  linkBoundLength(state: number, which: number): number;
  linkBoundAt(state: number, which: number): number;
  contextNew(uuids: number, messages: number, models: number, tools: number, state: number): number;
  skimRecord(src: number, length: number, quoteArea: number, output: number, offset: number, context: number): number;
  CONTEXT_BYTES: { value: number };
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
  /** The memory's buffer when the regions were laid out: every view of them is made on it. */
  private home: ArrayBufferLike;
  private tables = false;

  private constructor(
    private readonly exports: Exports,
    private readonly chunkBytes: number,
  ) {
    this.chunkStart = (exports.heapBase() + 15) & ~15;
    this.src = chunkBytes > 0 ? (this.chunkStart + chunkBytes + PAD + 15) & ~15 : this.chunkStart;
    this.bytes = new Uint8Array(0);
    this.positions = new Uint32Array(0);
    this.fields = new Int32Array(0);
    this.home = exports.memory.buffer;
    if (exports.FIELD_SLOTS.value !== CLAUDE_FIELD_SLOTS || exports.LINK_AREA.value !== LINK_FIELD * 4) throw new Error('json-scan-wasm.ts does not match json-scan.ts');
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
   * they are (`skimRecordAt`) instead of being copied. Its memory never moves.
   */
  chunk(): Buffer {
    return Buffer.from(this.home, this.chunkStart, this.chunkBytes);
  }

  /** Whether `buffer` is (part of) this scanner's chunk region. */
  holds(buffer: Uint8Array): boolean {
    return this.chunkBytes > 0 && buffer.buffer === this.home;
  }

  /**
   * A new id table in this scanner's memory, with room for `expected` ids before it grows.
   * From the first table on, lines up to MAX_SCAN_BYTES are read without the memory being laid out again.
   */
  idTable(expected: number): WasmIdTable {
    this.startTables();
    return new WasmIdTable(this.exports, this.home, expected);
  }

  /** A new link state (the earliest and latest timestamp `link` has seen). */
  linkState(): number {
    this.startTables();
    const state = this.exports.linkStateNew();
    if (state === 0) throw new Error('no memory for the link state');
    return state;
  }

  /**
   * After `skimClaude…` returned SKIM_OK for a record of the message graph: files its uuid
   * in `uuids`, resolves its parent, tracks its timestamp in `state` and numbers its
   * message id in `messages` (assistant records). Returns a LINK value; with LINK.ADDED,
   * `fields[LINK_FIELD…]` hold the parent (a record number or a LINK_PARENT), the message
   * number (-1: none) and LINK_FLAG bits.
   */
  link(state: number, uuids: WasmIdTable, messages: WasmIdTable, assistant: boolean): number {
    const result = this.exports.linkRecord(state, uuids.handle, messages.handle, assistant);
    if (result < 0) throw new Error('no memory for more ids');
    return result;
  }

  /** Tables, link state and context for reading whole records (`skimRecord…`). */
  readerContext(expectedRecords: number, needs: number): ReaderContext {
    const uuids = this.idTable(expectedRecords);
    // An API message spans several lines; a transcript names few models and tools.
    const messages = this.idTable(expectedRecords >> 2);
    const models = this.idTable(16);
    const tools = this.idTable(64);
    const state = this.linkState();
    const address = this.exports.contextNew(uuids.handle, messages.handle, models.handle, tools.handle, state);
    if (address === 0) throw new Error('no memory for a reader context');
    const fields = new Int32Array(this.exports.memory.buffer, address, this.exports.CONTEXT_BYTES.value / 4);
    fields[CONTEXT_NEEDS] = needs;
    return { address, uuids, messages, models, tools, state, fields };
  }

  /** Sets what `context` still leaves to the caller (NEED bits). */
  static setNeeds(context: ReaderContext, needs: number): void {
    context.fields[CONTEXT_NEEDS] = needs;
  }

  /** Tells `context` that the caller set the version itself (the next version seen is reported). */
  static forgetVersion(context: ReaderContext): void {
    context.fields[CONTEXT_VERSION] = 0;
  }

  /**
   * skimClaude, then (when the line is read) the whole record read for `context`, for the line at
   * [start, end) of `buffer` (in place when it is the chunk region, else copied): see RECORD_READ.
   */
  skimRecordAt(buffer: Uint8Array, start: number, end: number, context: ReaderContext): number {
    const length = end - start;
    if (length > MAX_SCAN_BYTES) return -2;
    if (this.holds(buffer)) return this.exports.skimRecord(buffer.byteOffset + start, length, this.out, this.output, start, context.address);
    this.bytes.set(buffer.subarray(start, end), this.src);
    return this.exports.skimRecord(this.src, length, this.out, this.output, start, context.address);
  }

  /** The earliest (0) or latest (1) timestamp kept by `link` in `state`, if any. */
  linkBound(state: number, which: 0 | 1): string | undefined {
    const length = this.exports.linkBoundLength(state, which);
    if (length < 0) return undefined;
    const at = this.exports.linkBoundAt(state, which);
    // The state lies in memory added after the regions were laid out: a view of the memory as it is now.
    return Buffer.from(this.exports.memory.buffer, at, length).toString('latin1');
  }

  /**
   * Drops every id table, link state and reader context made in this scanner (their memory is
   * reused, cleared), so that the scanner can read another file. Nothing made before may be used after.
   */
  reset(): void {
    if (this.tables) this.exports.tablesInit(this.output + OUTPUT_BYTES);
  }

  private startTables(): void {
    if (this.tables) return;
    if (this.capacity < MAX_SCAN_BYTES) this.reserve(MAX_SCAN_BYTES);
    this.exports.tablesInit(this.output + OUTPUT_BYTES);
    this.tables = true;
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
    this.home = memory.buffer;
    this.bytes = new Uint8Array(this.home);
    this.positions = new Uint32Array(this.home, out, capacity + PAD);
    this.fields = new Int32Array(this.home, output, OUTPUT_BYTES / 4);
  }
}
