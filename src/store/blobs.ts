import { createHash } from 'node:crypto';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { optionalMembersJson, scrubbedCanonicalJson } from './keys.js';
import { messageDigest, messageJson } from './request-hash.js';

/**
 * Content-addressed storage of long request parts (store schema 3). A cell's
 * `request` column holds its canonical request JSON with long parts replaced by
 * references to rows of the `blobs` table:
 *
 * - `{"$blob": "<sha256>"}` stands for one message; the blob body is the
 *   message's canonical JSON (any message of at least BLOB_MIN_CHARS characters);
 * - `{"$blobs": "<sha256>"}` stands for a run of messages: the cacheable prefix
 *   (every message up to the last one marked `cacheBreakpoint`) when it is long;
 *   the body is a JSON array of entries, which may be `$blob` references.
 *
 * The hash of a message blob is the SHA-256 of the message's canonical JSON; the
 * hash of a run blob is the SHA-256 of its body. Cells sharing a session prefix
 * therefore store the prefix once, and a prefix's long messages once even when
 * system prompts or inserted turns around them differ. Cell keys never depend
 * on this form: they hash the full canonical request (keys.ts).
 * Stores written before schema 3 hold the full JSON, which decodes unchanged.
 */

/** Messages at least this long (characters of content) are stored as blobs. */
export const BLOB_MIN_CHARS = 2_048;
/** A cacheable prefix at least this long (total characters) is stored as one run blob. */
export const RUN_BLOB_MIN_CHARS = 4_000;

export interface EncodedRequest {
  /** The request column: canonical request JSON with references in place of long parts. */
  json: string;
  /** Blob bodies the JSON refers to (directly or through a run blob), by hash. */
  blobs: Map<string, string>;
}

function encodeMessage(message: ChatMessage, blobs: Map<string, string>): string {
  if (message.content.length < BLOB_MIN_CHARS) return messageJson(message);
  const hash = messageDigest(message);
  if (!blobs.has(hash)) blobs.set(hash, messageJson(message));
  return `{"$blob":"${hash}"}`;
}

interface RunEntry {
  roles: string[];
  contents: string[];
  breakpoints: unknown[];
  hash: string;
  body: string;
  blobs: Map<string, string>;
}

/** Run blobs cached on the prefix's last message (shared by every cell of a prefix group). */
const runCache = new WeakMap<ChatMessage, RunEntry>();

function runOf(messages: readonly ChatMessage[], end: number): RunEntry {
  const last = messages[end]!;
  const cached = runCache.get(last);
  if (cached && cached.contents.length === end + 1) {
    let same = true;
    for (let index = 0; index <= end && same; index += 1) {
      const message = messages[index]!;
      same = cached.contents[index] === message.content && cached.roles[index] === message.role && cached.breakpoints[index] === message.cacheBreakpoint;
    }
    if (same) return cached;
  }
  const blobs = new Map<string, string>();
  const entries: string[] = [];
  for (let index = 0; index <= end; index += 1) entries.push(encodeMessage(messages[index]!, blobs));
  const body = `[${entries.join(',')}]`;
  const entry: RunEntry = {
    roles: messages.slice(0, end + 1).map((m) => m.role),
    contents: messages.slice(0, end + 1).map((m) => m.content),
    breakpoints: messages.slice(0, end + 1).map((m) => m.cacheBreakpoint),
    hash: createHash('sha256').update(body).digest('hex'),
    body,
    blobs,
  };
  runCache.set(last, entry);
  return entry;
}

/** The stored form of a request (credential fields scrubbed as in the cell key's JSON). */
export function encodeRequest(request: ModelRequest): EncodedRequest {
  const messages = request.messages;
  const blobs = new Map<string, string>();
  const prefixEnd = messages.findLastIndex((message) => message.cacheBreakpoint);
  let prefixChars = 0;
  for (let index = 0; index <= prefixEnd; index += 1) prefixChars += messages[index]!.content.length;
  const entries: string[] = [];
  let start = 0;
  if (prefixEnd >= 0 && prefixChars >= RUN_BLOB_MIN_CHARS) {
    const run = runOf(messages, prefixEnd);
    blobs.set(run.hash, run.body);
    for (const [hash, body] of run.blobs) blobs.set(hash, body);
    entries.push(`{"$blobs":"${run.hash}"}`);
    start = prefixEnd + 1;
  }
  for (let index = start; index < messages.length; index += 1) entries.push(encodeMessage(messages[index]!, blobs));
  const tail = optionalMembersJson(request);
  const json =
    `{"messages":[${entries.join(',')}],"model":${JSON.stringify(request.model)},` +
    `"params":${scrubbedCanonicalJson(request.params ?? {})},"sample":${scrubbedCanonicalJson(request.sample)}${tail}}`;
  return { json, blobs };
}

/** Looks up a blob body by hash (undefined when the store lacks it). */
export type BlobReader = (hash: string) => string | undefined;

/** A reference entry, or undefined for an inline message. */
function referenceOf(entry: unknown): { kind: '$blob' | '$blobs'; hash: string } | undefined {
  if (entry === null || typeof entry !== 'object' || Array.isArray(entry)) return undefined;
  const record = entry as Record<string, unknown>;
  if ('role' in record || 'content' in record) return undefined;
  if (typeof record.$blob === 'string') return { kind: '$blob', hash: record.$blob };
  if (typeof record.$blobs === 'string') return { kind: '$blobs', hash: record.$blobs };
  return undefined;
}

/**
 * Parsed blob bodies shared by the requests one reader decodes (a report reads
 * many cells of one prefix). Bounded by total body size; cleared when full.
 */
export class BlobCache {
  private readonly parsed = new Map<string, unknown>();
  private chars = 0;

  constructor(
    private readonly read: BlobReader,
    private readonly maxChars = 64 * 1024 * 1024,
  ) {}

  get(hash: string): unknown {
    if (this.parsed.has(hash)) return this.parsed.get(hash);
    const body = this.read(hash);
    if (body === undefined) throw new Error(`request refers to blob ${hash}, which the store does not hold`);
    if (this.chars + body.length > this.maxChars) {
      this.parsed.clear();
      this.chars = 0;
    }
    const value: unknown = JSON.parse(body);
    this.parsed.set(hash, value);
    this.chars += body.length;
    return value;
  }
}

function expandEntries(entries: readonly unknown[], blobs: BlobCache, out: unknown[], depth: number): void {
  for (const entry of entries) {
    const reference = referenceOf(entry);
    if (!reference) {
      out.push(entry);
    } else if (reference.kind === '$blob') {
      // A fresh object per request, so a caller editing one decoded request edits no other.
      out.push({ ...(blobs.get(reference.hash) as object) });
    } else {
      if (depth > 0) throw new Error(`run blob ${reference.hash} is nested in another run blob`);
      const body = blobs.get(reference.hash);
      if (!Array.isArray(body)) throw new Error(`run blob ${reference.hash} is not an array of messages`);
      expandEntries(body, blobs, out, depth + 1);
    }
  }
}

/** The full request from its stored form (stored forms without references decode unchanged). */
export function decodeRequest(json: string, blobs: BlobCache): ModelRequest {
  const request = JSON.parse(json) as ModelRequest;
  if (!Array.isArray(request.messages) || !json.includes('"$blob')) return request;
  const messages: unknown[] = [];
  expandEntries(request.messages, blobs, messages, 0);
  request.messages = messages as ChatMessage[];
  return request;
}
