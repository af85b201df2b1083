/**
 * Prompt-cache billing as the providers publish it, for the cache-billing benchmark.
 * Pure apart from the clock the caller passes in (virtual milliseconds).
 *
 * Anthropic (prompt-caching guide): a prefix is cached only at a `cache_control`
 * breakpoint and only from the model's minimum (1,024 tokens here); a request
 * reads the longest live breakpoint prefix and writes the rest up to its last
 * breakpoint; an entry lives 5 minutes (or 1 hour with `ttl: "1h"`) after its
 * last use, reads refresh it; an entry is usable once the call that wrote it has
 * answered. Writes bill 1.25× input (2× for 1 hour), reads 0.1×.
 *
 * OpenAI (prompt-caching guide): prefixes of at least 1,024 tokens are cached
 * automatically, matched in 128-token steps; a request is routed by a hash of
 * its first ~256 tokens plus `prompt_cache_key`; beyond about 15 requests a
 * minute for one route, requests overflow to other machines, whose caches do
 * not hold the prefix until they have served it; entries live 5 minutes after
 * their last use (the short end of the in-memory 5–10 minutes), or 24 hours when
 * the request asked for `prompt_cache_retention: "24h"` (extended retention, same
 * price). Reads bill at the model's cached-input price (0.25× for GPT-4.1, 0.5× for
 * GPT-4o class models).
 */
import { createHash } from 'node:crypto';

export interface Block {
  text: string;
  /** Breakpoint on this block (Anthropic), with its TTL. */
  breakpoint?: '5m' | '1h';
  /** First block of a message: the chat format adds a few tokens per message. */
  messageStart: boolean;
}

export interface CacheUsage {
  inputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
  /** Which writes were for the 1-hour TTL (billed 2× instead of 1.25×). */
  longWriteTokens: number;
  overflowed?: boolean;
}

const PER_MESSAGE_TOKENS = 4;
const PER_REQUEST_TOKENS = 3;
const MINUTE = 60_000;

/** Token count with per-text memo (a grid repeats its long prefixes on every call). */
export function tokenCounter(count: (text: string) => number): (text: string) => number {
  const memo = new Map<string, number>();
  return (text) => {
    let n = memo.get(text);
    if (n === undefined) {
      n = count(text);
      memo.set(text, n);
    }
    return n;
  };
}

/** Cumulative token count after each block (framing included), like the estimate counts. */
function cumulative(blocks: readonly Block[], tokens: (text: string) => number): number[] {
  const out: number[] = [];
  let total = PER_REQUEST_TOKENS;
  for (const block of blocks) {
    total += (block.messageStart ? PER_MESSAGE_TOKENS : 0) + tokens(block.text);
    out.push(total);
  }
  return out;
}

const sha = (text: string) => createHash('sha1').update(text).digest('hex');

export class AnthropicCache {
  private readonly entries = new Map<string, { until: number; ttlMs: number; readyAt: number }>();

  constructor(
    private readonly tokens: (text: string) => number,
    private readonly minimumTokens = 1024,
  ) {}

  /** Bills a request arriving at `now` whose answer comes at `answeredAt`. */
  bill(blocks: readonly Block[], now: number, answeredAt: number): CacheUsage {
    const totals = cumulative(blocks, this.tokens);
    const inputTokens = totals.at(-1) ?? PER_REQUEST_TOKENS;
    // Chain hash of the prefix ending at each breakpoint that passes the minimum.
    const points: Array<{ hash: string; tokens: number; ttlMs: number }> = [];
    let chain = '';
    blocks.forEach((block, index) => {
      chain = sha(`${chain}\u0000${block.messageStart ? 'M' : 'B'}${block.text}`);
      if (block.breakpoint !== undefined && totals[index]! >= this.minimumTokens) {
        points.push({ hash: chain, tokens: totals[index]!, ttlMs: block.breakpoint === '1h' ? 60 * MINUTE : 5 * MINUTE });
      }
    });
    if (points.length === 0) return { inputTokens, cachedInputTokens: 0, cacheWriteTokens: 0, longWriteTokens: 0 };
    let read = 0;
    for (let i = points.length - 1; i >= 0; i -= 1) {
      const entry = this.entries.get(points[i]!.hash);
      if (entry !== undefined && entry.readyAt <= now && entry.until >= now) {
        read = points[i]!.tokens;
        entry.until = now + entry.ttlMs; // reads refresh the lifetime
        break;
      }
    }
    const last = points.at(-1)!;
    const written = last.tokens - read;
    let longWritten = 0;
    for (const point of points) {
      if (point.tokens <= read) continue;
      const entry = this.entries.get(point.hash);
      const alive = entry !== undefined && entry.until >= now;
      if (!alive || entry.readyAt > now) {
        // A write: usable once this call has answered.
        this.entries.set(point.hash, {
          until: answeredAt + point.ttlMs,
          ttlMs: point.ttlMs,
          readyAt: entry?.readyAt !== undefined && alive ? entry.readyAt : answeredAt,
        });
      }
    }
    if (last.ttlMs > 5 * MINUTE) longWritten = written;
    return { inputTokens, cachedInputTokens: read, cacheWriteTokens: written, longWriteTokens: longWritten };
  }
}

export class OpenAICache {
  /** Per machine: chunk-chain hash → time its entry expires. */
  private readonly machines: Array<Map<string, number>>;
  /** Per machine: chunk-chain hash → time from which its entry can be read (with `readyOnAnswer`). */
  private readonly readyAt: Array<Map<string, number>>;
  private readonly routes = new Map<string, number[]>();
  private seed: number;

  constructor(
    private readonly tokens: (text: string) => number,
    private readonly options: {
      machines?: number;
      requestsPerMinute?: number;
      ttlMs?: number;
      chunkChars?: number;
      seed?: number;
      /** An entry is readable only once the call that wrote it has answered (concurrent batch lines). */
      readyOnAnswer?: boolean;
    } = {},
  ) {
    this.machines = Array.from({ length: options.machines ?? 32 }, () => new Map());
    this.readyAt = Array.from({ length: options.machines ?? 32 }, () => new Map());
    this.seed = options.seed ?? 1;
  }

  /** Bills a request arriving at `now` answered at `answeredAt`; `retention` is its `prompt_cache_retention`. */
  bill(blocks: readonly Block[], cacheKey: string | undefined, now: number, answeredAt: number, retention?: string): CacheUsage {
    const totals = cumulative(blocks, this.tokens);
    const inputTokens = totals.at(-1) ?? PER_REQUEST_TOKENS;
    const text = blocks.map((block) => `${block.messageStart ? '\u0001' : ''}${block.text}`).join('');
    // Routing: the first ~256 tokens (about 1,024 characters) and the cache key.
    const route = sha(`${text.slice(0, 1024)}\u0000${cacheKey ?? ''}`);
    const home = Number.parseInt(route.slice(0, 8), 16) % this.machines.length;
    const window = (this.routes.get(route) ?? []).filter((t) => t > now - MINUTE);
    const overflowed = window.length >= (this.options.requestsPerMinute ?? 15);
    window.push(now);
    this.routes.set(route, window);
    const machineIndex = overflowed ? (home + 1 + Math.floor(this.random() * (this.machines.length - 1))) % this.machines.length : home;
    const machine = this.machines[machineIndex]!;

    const chunk = this.options.chunkChars ?? 512;
    const ttl = retention === '24h' ? 24 * 60 * MINUTE : (this.options.ttlMs ?? 5 * MINUTE);
    const hashes: string[] = [];
    let chain = '';
    for (let at = 0; at + chunk <= text.length; at += chunk) {
      chain = sha(`${chain}${text.slice(at, at + chunk)}`);
      hashes.push(chain);
    }
    let hitChunks = 0;
    const ready = this.readyAt[machineIndex]!;
    const readable = (hash: string) =>
      (machine.get(hash) ?? Number.NEGATIVE_INFINITY) >= now && (!this.options.readyOnAnswer || (ready.get(hash) ?? Number.POSITIVE_INFINITY) <= now);
    while (hitChunks < hashes.length && readable(hashes[hitChunks]!)) hitChunks += 1;
    for (let i = 0; i < hitChunks; i += 1) machine.set(hashes[i]!, now + ttl);
    // The served prompt is cached once answered (the entry outlives the answer by the TTL).
    for (const hash of hashes) {
      const alive = (machine.get(hash) ?? Number.NEGATIVE_INFINITY) >= now;
      if (!alive || !ready.has(hash)) ready.set(hash, answeredAt);
      machine.set(hash, Math.max(machine.get(hash) ?? 0, answeredAt + ttl));
    }
    const hitTokens = Math.floor(inputTokens * ((hitChunks * chunk) / Math.max(1, text.length)));
    const cached = hitTokens >= 1024 ? Math.floor(hitTokens / 128) * 128 : 0;
    return { inputTokens, cachedInputTokens: cached, cacheWriteTokens: 0, longWriteTokens: 0, overflowed };
  }

  private random(): number {
    // mulberry32: reproducible overflow routing.
    this.seed = (this.seed + 0x6d2b79f5) | 0;
    let t = this.seed;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  }
}

/**
 * The blocks a provider request body sends, in order, with its Anthropic breakpoints (and
 * `prompt_cache_key`, OpenAI): what the caches above bill. A fake server passes `request.body`.
 */
export function blocksOf(provider: 'anthropic' | 'openai', body: Record<string, unknown>): { blocks: Block[]; cacheKey?: string; retention?: string } {
  const blocks: Block[] = [];
  const take = (content: unknown) => {
    if (typeof content === 'string') {
      blocks.push({ text: content, messageStart: true });
      return;
    }
    (content as Array<{ text?: string; cache_control?: { ttl?: string } }>).forEach((part, index) => {
      blocks.push({
        text: part.text ?? '',
        messageStart: index === 0,
        ...(part.cache_control ? { breakpoint: part.cache_control.ttl === '1h' ? '1h' : '5m' } : {}),
      });
    });
  };
  if (provider === 'anthropic' && body.system !== undefined) take(body.system);
  for (const message of body.messages as Array<{ content: unknown }>) take(message.content);
  const key = body.prompt_cache_key;
  const retention = body.prompt_cache_retention;
  return {
    blocks,
    ...(typeof key === 'string' ? { cacheKey: key } : {}),
    ...(typeof retention === 'string' ? { retention } : {}),
  };
}

/** Per-million-token prices (as the price table gives them). */
export interface TokenPrices {
  input: number;
  cachedInput?: number;
  cacheWrite?: number;
}

/**
 * The input side of a bill, in price units (USD × 1e6 at per-million prices): plain input at the
 * input price, cache reads at the cached-input price, cache writes at the write price (2× input
 * when any write was for the 1-hour lifetime).
 */
export function billedInput(usage: CacheUsage, price: TokenPrices): number {
  const plain = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens;
  const writePrice = usage.longWriteTokens > 0 ? 2 * price.input : (price.cacheWrite ?? price.input);
  return plain * price.input + usage.cachedInputTokens * (price.cachedInput ?? price.input) + usage.cacheWriteTokens * writePrice;
}
