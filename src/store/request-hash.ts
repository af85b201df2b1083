import { createHash, type Hash } from 'node:crypto';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { identityModel, optionalMembersJson, scrubbedCanonicalJson, validateRequest } from './keys.js';

/**
 * Cell keys without whole-grid serialization. A paper-scale plan holds thousands
 * of cells whose messages share a few long session prefixes by reference; the
 * canonical JSON of each long message is built once (cached on the message
 * object), and the hash state after a whole message list is cached on the list,
 * so the cells that differ only in model or sample hash the list once. The keys
 * are byte-for-byte those of `cellIdentity` (tests compare them).
 */

/** Messages shorter than this are serialized on the spot (caching them costs more than it saves). */
const CACHE_MIN_CHARS = 8_192;
/** Message lists shorter than this (total content) are hashed on the spot. */
const LIST_CACHE_MIN_CHARS = 8_192;

interface MessageEntry {
  role: string;
  content: string;
  cacheBreakpoint: unknown;
  /** Built on first use (a primed entry has only its digest). */
  json?: string;
  digest?: string;
}

const messageCache = new WeakMap<ChatMessage, MessageEntry>();

/** Only the three known members, so the cached JSON cannot miss an extra field. */
function plainMessage(message: ChatMessage): boolean {
  for (const name in message) if (name !== 'role' && name !== 'content' && name !== 'cacheBreakpoint') return false;
  return true;
}

function entryOf(message: ChatMessage): MessageEntry | undefined {
  if (message.content.length < CACHE_MIN_CHARS || !plainMessage(message)) return undefined;
  const cached = messageCache.get(message);
  if (cached && cached.content === message.content && cached.role === message.role && cached.cacheBreakpoint === message.cacheBreakpoint) {
    return cached;
  }
  const entry: MessageEntry = { role: message.role, content: message.content, cacheBreakpoint: message.cacheBreakpoint };
  messageCache.set(message, entry);
  return entry;
}

/** Canonical, credential-scrubbed JSON of one message (cached for long messages). */
export function messageJson(message: ChatMessage): string {
  const entry = entryOf(message);
  if (!entry) return scrubbedCanonicalJson(message);
  entry.json ??= scrubbedCanonicalJson(message);
  return entry.json;
}

/** SHA-256 (hex) of `messageJson(message)` (cached for long messages). */
export function messageDigest(message: ChatMessage): string {
  const entry = entryOf(message);
  if (!entry) return createHash('sha256').update(scrubbedCanonicalJson(message)).digest('hex');
  entry.digest ??= createHash('sha256').update(messageJson(message)).digest('hex');
  return entry.digest;
}

/**
 * Hashes computed on another thread (the reward server's workers build the labeller's requests,
 * src/memory-drift/mitigation/reward-label-prompt.ts): `messageDigest` and `requestKeys` of an
 * equal message or request, there, by these same functions. Recorded here on the objects, they
 * spare this thread hashing megabytes; a message or request changed since is hashed anew.
 */
export function primeMessageDigest(message: ChatMessage, digest: string): void {
  const entry = entryOf(message);
  if (entry !== undefined) entry.digest = digest;
}

interface PrimedKeys {
  messages: readonly ChatMessage[];
  roles: string[];
  contents: string[];
  model: string;
  params: ModelRequest['params'];
  sample: number;
  keys: { key: string; contentKey: string; legacyKey?: string };
}

const primedKeys = new WeakMap<ModelRequest, PrimedKeys>();

/** See primeMessageDigest. Only a request of model, plain messages, params and sample is primed. */
export function primeRequestKeys(request: ModelRequest, keys: { key: string; contentKey: string; legacyKey?: string }): void {
  if (request.tools !== undefined || request.toolChoice !== undefined || request.unit !== undefined || request.identity !== undefined) return;
  if (!request.messages.every(plainMessage)) return;
  primedKeys.set(request, {
    messages: request.messages,
    roles: request.messages.map((m) => m.role),
    contents: request.messages.map((m) => m.content),
    model: request.model,
    params: request.params,
    sample: request.sample,
    keys: { ...keys },
  });
}

/** The primed keys, when the request is still the one they were computed for (same strings and objects: no hashing). */
function primedKeysOf(request: ModelRequest): PrimedKeys['keys'] | undefined {
  const primed = primedKeys.get(request);
  if (primed === undefined) return undefined;
  const { messages } = request;
  const same =
    messages === primed.messages &&
    messages.length === primed.contents.length &&
    messages.every((m, i) => m.content === primed.contents[i] && m.role === primed.roles[i] && plainMessage(m)) &&
    request.model === primed.model &&
    request.params === primed.params &&
    request.sample === primed.sample &&
    request.tools === undefined &&
    request.toolChoice === undefined &&
    request.unit === undefined &&
    request.identity === undefined;
  return same ? { ...primed.keys } : undefined;
}

interface ListEntry {
  items: ChatMessage[];
  roles: string[];
  contents: string[];
  breakpoints: unknown[];
  /** Hash state after `{"messages":[…]`. */
  state: Hash;
}

const listCache = new WeakMap<readonly ChatMessage[], ListEntry>();

function listUnchanged(entry: ListEntry, messages: readonly ChatMessage[]): boolean {
  return (
    entry.items.length === messages.length &&
    messages.every(
      (message, index) =>
        entry.items[index] === message &&
        entry.contents[index] === message.content &&
        entry.roles[index] === message.role &&
        entry.breakpoints[index] === message.cacheBreakpoint &&
        plainMessage(message),
    )
  );
}

function hashMessages(hash: Hash, messages: readonly ChatMessage[]): void {
  hash.update('{"messages":[');
  for (let index = 0; index < messages.length; index += 1) {
    if (index > 0) hash.update(',');
    hash.update(messageJson(messages[index]!));
  }
  hash.update(']');
}

/** Hash state after the messages member, from the list cache when the list did not change. */
function messagesState(messages: readonly ChatMessage[]): Hash {
  let chars = 0;
  for (const message of messages) chars += message.content.length;
  if (chars < LIST_CACHE_MIN_CHARS) {
    const hash = createHash('sha256');
    hashMessages(hash, messages);
    return hash;
  }
  const cached = listCache.get(messages);
  if (cached && listUnchanged(cached, messages)) return cached.state.copy();
  const state = createHash('sha256');
  hashMessages(state, messages);
  listCache.set(messages, {
    items: [...messages],
    roles: messages.map((m) => m.role),
    contents: messages.map((m) => m.content),
    breakpoints: messages.map((m) => m.cacheBreakpoint),
    state,
  });
  return state.copy();
}

/** `cellKey` and `contentKey` of a request, hashed incrementally (no request-sized string is built). */
export function requestKeys(request: ModelRequest): { key: string; contentKey: string; legacyKey?: string } {
  validateRequest(request);
  const primed = primedKeysOf(request);
  if (primed !== undefined) return primed;
  const state = messagesState(request.messages);
  // The members after `messages` and `model`, shared by both keys.
  const params = scrubbedCanonicalJson(request.params ?? {});
  const rest = `,"sample":${scrubbedCanonicalJson(request.sample)}${optionalMembersJson(request)}}`;
  const content = state.copy();
  // The key hashes the model without its base URL (identityModel); a store written under the
  // earlier rule holds its cells under the whole reference, kept as `legacyKey`.
  const model = identityModel(request);
  const legacy = model === request.model ? null : state.copy();
  state.update(`,"model":${JSON.stringify(model)},"params":${params}${rest}`);
  content.update(`,"params":${params}${rest}`);
  const keys: { key: string; contentKey: string; legacyKey?: string } = { key: state.digest('hex'), contentKey: content.digest('hex') };
  if (legacy) {
    legacy.update(`,"model":${JSON.stringify(request.model)},"params":${params}${rest}`);
    keys.legacyKey = legacy.digest('hex');
  }
  return keys;
}
