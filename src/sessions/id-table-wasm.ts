import type { IdSet } from './id-table.js';

/** The module's memory (shared: growing it never detaches a view). */
export interface WasmMemory {
  buffer: ArrayBufferLike;
  grow(pages: number): number;
}

/** The id-table functions of the json-scan module (wasm/id-table.ts). */
export interface IdTableExports {
  memory: WasmMemory;
  idTableNew(expected: number): number;
  idFindOrAdd(table: number, at: number, length: number): number;
  idFind(table: number, at: number, length: number): number;
  idEquals(table: number, index: number, at: number, length: number): number;
  idCount(table: number): number;
  idText(table: number, index: number): number;
  idTextAt(table: number): number;
  tablesAlloc(bytes: number): number;
}

const NO_MEMORY = -2;
const INPUT_BYTES = 4096;

/**
 * IdTable (id-table.ts) kept in the json-scan module's memory, where the line reader files
 * ids as it reads them (JsonScanner.link). Ids given from elsewhere (strings from
 * JSON.parse, bytes of a line outside the module's memory) are copied in first.
 */
export class WasmIdTable implements IdSet {
  /** The table's address in the module's memory. */
  readonly handle: number;
  /** Where ids from outside the module's memory are copied to. */
  private input: Buffer;
  /** A view of the memory as it was last seen large enough (for reading ids back). */
  private view: Buffer;

  constructor(
    private readonly wasm: IdTableExports,
    /** The memory's buffer that views of the caller's regions (line bytes read in place) were made on. */
    private readonly home: ArrayBufferLike,
    expected: number,
  ) {
    this.handle = wasm.idTableNew(expected);
    const input = wasm.tablesAlloc(INPUT_BYTES);
    if (this.handle === 0 || input === 0) throw new Error('no memory for an id table');
    this.view = Buffer.from(wasm.memory.buffer);
    this.input = this.view.subarray(input, input + INPUT_BYTES);
  }

  get count(): number {
    return this.wasm.idCount(this.handle);
  }

  findOrAdd(bytes: Uint8Array, from: number, to: number): number {
    const found = this.wasm.idFindOrAdd(this.handle, this.place(bytes, from, to), to - from);
    if (found === NO_MEMORY) throw new Error('no memory for more ids');
    return found;
  }

  find(bytes: Uint8Array, from: number, to: number): number {
    return this.wasm.idFind(this.handle, this.place(bytes, from, to), to - from);
  }

  findOrAddString(id: string): number {
    const length = this.encode(id);
    return this.findOrAdd(this.input, 0, length);
  }

  findString(id: string): number {
    const length = this.encode(id);
    return this.find(this.input, 0, length);
  }

  equals(index: number, bytes: Uint8Array, from: number, to: number): boolean {
    return this.wasm.idEquals(this.handle, index, this.place(bytes, from, to), to - from) !== 0;
  }

  text(index: number): string {
    const length = this.wasm.idText(this.handle, index);
    if (length === NO_MEMORY) throw new Error('no memory for reading an id');
    const at = this.wasm.idTextAt(this.handle);
    if (at + length > this.view.length) this.view = Buffer.from(this.wasm.memory.buffer);
    return this.view.toString('utf8', at, at + length);
  }

  /** The address of bytes[from, to) in the module's memory: where they are, or a copy. */
  private place(bytes: Uint8Array, from: number, to: number): number {
    if (bytes.buffer === this.home || bytes.buffer === this.input.buffer) return bytes.byteOffset + from;
    const length = to - from;
    if (length > this.input.length) this.grow(length);
    this.input.set(bytes.subarray(from, to));
    return this.input.byteOffset;
  }

  private encode(id: string): number {
    if (id.length * 3 > this.input.length) this.grow(id.length * 3);
    return this.input.write(id, 0, 'utf8');
  }

  private grow(length: number): void {
    const at = this.wasm.tablesAlloc(length);
    if (at === 0) throw new Error('no memory for an id');
    this.view = Buffer.from(this.wasm.memory.buffer);
    this.input = this.view.subarray(at, at + length);
  }
}
