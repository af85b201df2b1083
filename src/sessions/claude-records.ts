import type { Block, MessageKind, SessionUsage } from './types.js';

/**
 * The records of a Claude Code transcript, one column per field. A transcript has
 * a record per line; one object per record made reading a large file mostly object
 * allocation and garbage collection. Pure storage: ClaudeParser decides what goes in.
 */

export const TYPE_USER = 1;
export const TYPE_ASSISTANT = 2;
export const TYPE_SYSTEM = 3;
export const TYPE_PROGRESS = 5;

/** In code order: the code of a type is its position + 1. */
const DAG_TYPES = ['user', 'assistant', 'system', 'attachment', 'progress'];

/** Code of a DAG record type, 0 for any other type. */
export function dagTypeCode(type: string): number {
  return DAG_TYPES.indexOf(type) + 1;
}

export const SIDECHAIN = 1;
export const SYNTHETIC = 2;
export const TOOL_RESULT = 4;

const KINDS: Array<MessageKind | undefined> = [undefined, 'human', 'injected', 'tool_result', 'compaction_summary', 'assistant', 'developer'];

export function kindCode(kind: MessageKind | undefined): number {
  return kind === undefined ? 0 : KINDS.indexOf(kind);
}

export function kindOf(code: number): MessageKind | undefined {
  return KINDS[code];
}

/** Parent links: a record index, or one of these. */
export const ROOT = -1;
/** The parent is not in this file. */
export const MISSING = -2;
/** The parent id was not seen yet when the record was read (see `unresolvedParents`). */
export const UNRESOLVED = -3;

export interface SystemDetail {
  subtype?: string;
  logicalParent?: string;
  trigger?: string;
  preTokens?: number;
  clearedToolIds?: string[];
}

/**
 * Distinct ids (record uuids, API message ids, model names) numbered in the order first seen.
 * Links between records are these numbers, so the record columns stay typed arrays.
 */
export class IdNumbers {
  private readonly numbers = new Map<string, number>();
  private readonly texts: string[] = [];

  get count(): number {
    return this.texts.length;
  }

  /** The number of `id`, or -1. */
  find(id: string): number {
    return this.numbers.get(id) ?? -1;
  }

  /** The number of `id`, adding it when new. */
  numberOf(id: string): number {
    let n = this.numbers.get(id);
    if (n === undefined) {
      n = this.texts.length;
      this.texts.push(id);
      this.numbers.set(id, n);
    }
    return n;
  }

  text(n: number): string {
    return this.texts[n]!;
  }
}

/** Shared by every record without blocks. Never mutated. */
export const NO_BLOCKS: Block[] = [];

const INITIAL_ROWS = 256;

export class ClaudeRecordTable {
  count = 0;
  line = new Int32Array(INITIAL_ROWS);
  parent = new Int32Array(INITIAL_ROWS);
  type = new Uint8Array(INITIAL_ROWS);
  flags = new Uint8Array(INITIAL_ROWS);
  kind = new Uint8Array(INITIAL_ROWS);
  /** Contribution to the agent-step counter (docs/decisions.md#d13). */
  steps = new Uint8Array(INITIAL_ROWS);
  // Every column is a typed array (object columns made growth and garbage collection the
  // main cost of reading a large file): values that are objects or strings are numbered.
  /** Number of the API message id in `messageIds`, -1 for none. */
  messageId = new Int32Array(INITIAL_ROWS);
  /** Number of the model name in `models`, -1 for none. */
  model = new Int32Array(INITIAL_ROWS);
  /** Index in `usages`, -1 for none. */
  usage = new Int32Array(INITIAL_ROWS);
  /** Index in `blockLists`, -1 for no blocks. */
  blocks = new Int32Array(INITIAL_ROWS);
  readonly messageIds = new IdNumbers();
  readonly models = new IdNumbers();
  readonly usages: SessionUsage[] = [];
  readonly blockLists: Block[][] = [];
  /** Kept only with content (message timestamps); first/last are tracked while reading. */
  readonly timestamp: Array<string | undefined> = [];
  /** Sparse columns: most records have none. */
  readonly agentId = new Map<number, string>();
  readonly system = new Map<number, SystemDetail>();
  readonly unresolvedParents = new Map<number, string>();
  /** Codes of block lists by identity (counting mode, where lists are shared). */
  private readonly listCodes: Map<Block[], number> | undefined;

  constructor(
    /** Full content: timestamps are kept and block lists are not shared. */
    private readonly keepContent: boolean,
  ) {
    if (!keepContent) this.listCodes = new Map();
  }

  /** Appends a record with no message fields yet; returns its index. */
  add(line: number, parent: number, type: number, flags: number, timestamp: string | undefined): number {
    const index = this.count;
    if (index === this.line.length) this.grow();
    this.line[index] = line;
    this.parent[index] = parent;
    this.type[index] = type;
    this.flags[index] = flags;
    this.kind[index] = 0;
    this.steps[index] = 0;
    this.messageId[index] = -1;
    this.model[index] = -1;
    this.usage[index] = -1;
    this.blocks[index] = -1;
    if (this.keepContent) this.timestamp.push(timestamp);
    this.count = index + 1;
    return index;
  }

  setModel(index: number, model: string): void {
    this.model[index] = this.models.numberOf(model);
  }

  /** Records share usage objects: `sameAsLast` reuses the last one stored. */
  setUsage(index: number, usage: SessionUsage, sameAsLast: boolean): void {
    if (!sameAsLast || this.usages.length === 0) this.usages.push(usage);
    this.usage[index] = this.usages.length - 1;
  }

  setBlocks(index: number, blocks: Block[]): void {
    if (blocks.length === 0 && blocks === NO_BLOCKS) return;
    // Counting mode shares one list per tool name between records: stored once.
    let code = this.listCodes?.get(blocks);
    if (code === undefined) {
      code = this.blockLists.length;
      this.blockLists.push(blocks);
      this.listCodes?.set(blocks, code);
    }
    this.blocks[index] = code;
  }

  modelOf(index: number): string | undefined {
    const code = this.model[index]!;
    return code < 0 ? undefined : this.models.text(code);
  }

  usageOf(index: number): SessionUsage | undefined {
    const code = this.usage[index]!;
    return code < 0 ? undefined : this.usages[code];
  }

  blocksOf(index: number): Block[] {
    const code = this.blocks[index]!;
    return code < 0 ? NO_BLOCKS : this.blockLists[code]!;
  }

  timestampOf(index: number): string | undefined {
    return this.keepContent ? this.timestamp[index] : undefined;
  }

  private grow(): void {
    const size = this.line.length * 2;
    const int32 = (a: Int32Array): Int32Array<ArrayBuffer> => {
      const out = new Int32Array(size);
      out.set(a);
      return out;
    };
    const uint8 = (a: Uint8Array): Uint8Array<ArrayBuffer> => {
      const out = new Uint8Array(size);
      out.set(a);
      return out;
    };
    this.line = int32(this.line);
    this.parent = int32(this.parent);
    this.type = uint8(this.type);
    this.flags = uint8(this.flags);
    this.kind = uint8(this.kind);
    this.steps = uint8(this.steps);
    this.messageId = int32(this.messageId);
    this.model = int32(this.model);
    this.usage = int32(this.usage);
    this.blocks = int32(this.blocks);
  }
}
