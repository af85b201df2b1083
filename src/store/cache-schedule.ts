import type { ModelRequest } from '../models/types.js';
import { DEFAULT_PREFIX_MIN_CHARS, prefixSignature } from './schedule.js';

/**
 * Cache-aware order of a stage's cells (docs/decisions.md#cost-estimates-and-caching).
 *
 * Cells sharing a long prefix form a group. The first cell of a group (its
 * leader) warms the provider's prompt cache; the others (followers) are sent
 * only once the leader has answered, while the cache is alive. The scheduler
 * keeps every opened group inside the cache lifetime:
 *
 * - followers go before new leaders, the group closest to its expiry first
 *   (so groups interleave and each is touched again well before its TTL);
 * - a new group is opened only while the time between two touches of one
 *   group, at the observed latency and concurrency, stays under half the TTL;
 * - where the provider routes a prefix to other machines beyond a request
 *   rate (OpenAI: about 15 a minute per prefix and cache key), followers of a
 *   group are spaced to that rate and other groups fill the free slots.
 *
 * Pure apart from the injected clock: the runner asks `next(provider)` when a
 * slot is free and reports each call with `finished`.
 */

/** How one provider's prompt cache behaves, as far as scheduling goes. */
export interface CachePolicy {
  /** Lifetime of a cached prefix after its last use, in ms. */
  ttlMs: number;
  /** Most requests a minute for one prefix group before the provider spreads them to machines without the cache. */
  groupRequestsPerMinute?: number;
  /** Send a per-group cache key (OpenAI `prompt_cache_key`). */
  sendCacheKey: boolean;
}

/** The cache settings a run can choose (config `limits.cacheTtl`, `limits.promptCacheKey`). */
export interface CacheSettings {
  /** Anthropic cache lifetime: `5m` (default) or `1h` (writes cost 2× instead of 1.25×). */
  cacheTtl?: '5m' | '1h';
  /** Send OpenAI `prompt_cache_key` per prefix group (default true). */
  promptCacheKey?: boolean;
}

const MINUTE = 60_000;

/** OpenAI's documented rate per prefix and cache key before requests overflow to other machines. */
export const OPENAI_GROUP_REQUESTS_PER_MINUTE = 15;

/** The cache policy of a provider (the part of a model ref before ":"). */
export function cachePolicyFor(provider: string, settings: CacheSettings = {}): CachePolicy {
  switch (provider) {
    case 'anthropic':
      return { ttlMs: settings.cacheTtl === '1h' ? 60 * MINUTE : 5 * MINUTE, sendCacheKey: false };
    case 'openai':
      return {
        ttlMs: 5 * MINUTE,
        groupRequestsPerMinute: OPENAI_GROUP_REQUESTS_PER_MINUTE,
        sendCacheKey: settings.promptCacheKey !== false,
      };
    case 'azure':
      return { ttlMs: 5 * MINUTE, groupRequestsPerMinute: OPENAI_GROUP_REQUESTS_PER_MINUTE, sendCacheKey: false };
    default:
      return { ttlMs: 5 * MINUTE, sendCacheKey: false };
  }
}

/** The `prompt_cache_key` of a prefix group: derived from its signature, so a resumed run sends the same key. */
export function promptCacheKeyOf(signature: string): string {
  return `echolens-${signature.slice(0, 24)}`;
}

export interface CacheSchedulerOptions {
  /**
   * `prefix` (default): cache-aware groups; `plan`: plan order, no groups; `prefix-fifo`: the
   * earlier order, kept for comparison (every leader at once, then each leader's followers
   * first-in-first-out as the leaders answer, no pacing and no cache key).
   */
  mode?: 'prefix' | 'plan' | 'prefix-fifo';
  minChars?: number;
  providerOf: (model: string) => string;
  concurrencyOf: (provider: string) => number;
  policyOf: (provider: string) => CachePolicy;
  now: () => number;
  /** Latency assumed before any call of a provider has answered (ms). Default 30 s. */
  initialLatencyMs?: number;
  /** Share of the TTL the gap between two touches of a group may use (default 0.5). */
  ttlShare?: number;
  /** Hard cap on groups open at once per provider (default: only the TTL bound). */
  maxOpenGroups?: number;
}

export interface SchedulePick {
  /** Position in the requests given to the scheduler. */
  position: number;
  /** Cache key to send with the call (only where the provider takes one). */
  cacheKey?: string;
  role: 'leader' | 'follower' | 'single';
}

export type ScheduleStep = SchedulePick | { waitMs: number } | null;

type GroupState = 'cold' | 'warming' | 'warm';

interface Group {
  provider: string;
  signature: string;
  members: number[];
  /** Next member to send. */
  next: number;
  state: GroupState;
  opened: boolean;
  lastTouch: number;
  lastDispatch: number;
}

interface ProviderQueue {
  provider: string;
  policy: CachePolicy;
  concurrency: number;
  singles: number[];
  nextSingle: number;
  groups: Group[];
  nextGroup: number;
  open: Group[];
  latencyMs: number | null;
  /** `prefix-fifo` only: followers released by their leaders, and leaders plus singles in plan order. */
  fifo: { released: number[]; head: number; initial: number[]; next: number } | null;
}

export class CacheScheduler {
  private readonly queues = new Map<string, ProviderQueue>();
  private readonly groupOf = new Map<number, Group>();
  private readonly providerAt: string[] = [];
  private readonly options: CacheSchedulerOptions;
  private remainingCount: number;

  constructor(requests: readonly ModelRequest[], options: CacheSchedulerOptions) {
    this.options = options;
    this.remainingCount = requests.length;
    const bySignature = new Map<string, Group>();
    requests.forEach((request, position) => {
      const provider = options.providerOf(request.model);
      const queue = this.queueOf(provider);
      this.providerAt[position] = provider;
      const signature = options.mode === 'plan' ? null : prefixSignature(request, options.minChars ?? DEFAULT_PREFIX_MIN_CHARS);
      if (signature === null) {
        queue.singles.push(position);
        return;
      }
      let group = bySignature.get(signature);
      if (group === undefined) {
        group = { provider, signature, members: [], next: 0, state: 'cold', opened: false, lastTouch: 0, lastDispatch: Number.NEGATIVE_INFINITY };
        bySignature.set(signature, group);
        queue.groups.push(group);
      }
      group.members.push(position);
      this.groupOf.set(position, group);
    });
    // A group of one has nothing to share: it is an ordinary cell.
    for (const queue of this.queues.values()) {
      const kept: Group[] = [];
      for (const group of queue.groups) {
        if (group.members.length > 1) kept.push(group);
        else {
          queue.singles.push(group.members[0]!);
          this.groupOf.delete(group.members[0]!);
        }
      }
      queue.groups = kept;
      queue.singles.sort((a, b) => a - b);
      if (options.mode === 'prefix-fifo') {
        const initial = [...queue.singles, ...kept.map((group) => group.members[0]!)].sort((a, b) => a - b);
        queue.fifo = { released: [], head: 0, initial, next: 0 };
      }
    }
  }

  /** Providers with cells, in first-appearance order. */
  get providers(): string[] {
    return [...this.queues.keys()];
  }

  /** Cells not yet handed out. */
  get remaining(): number {
    return this.remainingCount;
  }

  /** The next cell to send on `provider`'s free slot, a wait (pacing), or null (nothing until a call finishes). */
  next(provider: string): ScheduleStep {
    const queue = this.queues.get(provider);
    if (queue === undefined) return null;
    if (queue.fifo !== null) return this.nextFifo(queue);
    const now = this.options.now();
    const pending = this.pendingFollowers(queue);

    // Keep the pipeline fed: warm another group before the followers at hand run out.
    if (pending < queue.concurrency && this.canOpen(queue)) return this.openLeader(queue, now);

    let best: Group | undefined;
    let wait = Number.POSITIVE_INFINITY;
    for (const group of queue.open) {
      if (group.state !== 'warm' || group.next >= group.members.length) continue;
      const paceWait = this.paceWait(queue, group, now);
      if (paceWait > 0) {
        wait = Math.min(wait, paceWait);
        continue;
      }
      if (best === undefined || group.lastTouch < best.lastTouch) best = group;
    }
    if (best !== undefined) {
      const position = best.members[best.next]!;
      best.next += 1;
      best.lastTouch = now;
      best.lastDispatch = now;
      this.remainingCount -= 1;
      if (best.next >= best.members.length) this.close(queue, best);
      return this.pick(queue, best, position, 'follower');
    }
    if (this.canOpen(queue)) return this.openLeader(queue, now);
    if (queue.nextSingle < queue.singles.length) {
      const position = queue.singles[queue.nextSingle]!;
      queue.nextSingle += 1;
      this.remainingCount -= 1;
      return { position, role: 'single' };
    }
    if (Number.isFinite(wait)) return { waitMs: Math.ceil(wait) };
    return null;
  }

  /** Reports a call's end: `ok` when the provider answered (its cache now holds the prefix). */
  finished(position: number, result: { ok: boolean; latencyMs: number }): void {
    const group = this.groupOf.get(position);
    const provider = this.providerAt[position];
    const queue = provider === undefined ? undefined : this.queues.get(provider);
    if (queue !== undefined && Number.isFinite(result.latencyMs) && result.latencyMs >= 0) {
      queue.latencyMs = queue.latencyMs === null ? result.latencyMs : 0.7 * queue.latencyMs + 0.3 * result.latencyMs;
    }
    if (queue?.fifo && group !== undefined && group.members[0] === position) {
      // The earlier order: a leader's answer releases all its followers at once.
      queue.fifo.released.push(...group.members.slice(1));
      return;
    }
    if (group === undefined || group.state !== 'warming' || group.members[group.next - 1] !== position) return;
    if (result.ok) {
      group.state = 'warm';
      group.lastTouch = this.options.now();
    } else {
      // No cache was written: the next member warms it again, alone.
      group.state = 'cold';
    }
    if (group.next >= group.members.length) this.close(this.queues.get(group.provider)!, group);
  }

  /** Latency the scheduler currently assumes for a provider (ms). */
  latencyOf(provider: string): number {
    return this.queues.get(provider)?.latencyMs ?? this.options.initialLatencyMs ?? 30_000;
  }

  private nextFifo(queue: ProviderQueue): ScheduleStep {
    const fifo = queue.fifo!;
    let position: number | undefined;
    let role: SchedulePick['role'] = 'follower';
    if (fifo.head < fifo.released.length) {
      position = fifo.released[fifo.head]!;
      fifo.head += 1;
    } else if (fifo.next < fifo.initial.length) {
      position = fifo.initial[fifo.next]!;
      fifo.next += 1;
      role = this.groupOf.has(position) ? 'leader' : 'single';
    }
    if (position === undefined) return null;
    this.remainingCount -= 1;
    return { position, role };
  }

  private queueOf(provider: string): ProviderQueue {
    let queue = this.queues.get(provider);
    if (queue === undefined) {
      queue = {
        provider,
        policy: this.options.policyOf(provider),
        concurrency: Math.max(1, this.options.concurrencyOf(provider)),
        singles: [],
        nextSingle: 0,
        groups: [],
        nextGroup: 0,
        open: [],
        latencyMs: null,
        fifo: null,
      };
      this.queues.set(provider, queue);
    }
    return queue;
  }

  private pendingFollowers(queue: ProviderQueue): number {
    let pending = 0;
    for (const group of queue.open) pending += group.members.length - group.next;
    return pending;
  }

  /** Whether one more group may be warmed without pushing any open group past its TTL. */
  private canOpen(queue: ProviderQueue): boolean {
    const cold = queue.open.some((group) => group.state === 'cold');
    if (!cold && queue.nextGroup >= queue.groups.length) return false;
    if (cold) return true; // re-warming an open group opens nothing new
    const open = queue.open.length;
    if (open === 0) return true;
    if (this.options.maxOpenGroups !== undefined && open >= this.options.maxOpenGroups) return false;
    const latency = this.latencyOf(queue.provider);
    // Under round-robin each open group is touched about every open × latency / concurrency.
    const gap = latency + ((open + 1) * latency) / queue.concurrency;
    return gap <= (this.options.ttlShare ?? 0.5) * queue.policy.ttlMs;
  }

  private openLeader(queue: ProviderQueue, now: number): SchedulePick {
    let group = queue.open.find((candidate) => candidate.state === 'cold');
    if (group === undefined) {
      group = queue.groups[queue.nextGroup]!;
      queue.nextGroup += 1;
      group.opened = true;
      queue.open.push(group);
    }
    const position = group.members[group.next]!;
    group.next += 1;
    group.state = 'warming';
    group.lastTouch = now;
    group.lastDispatch = now;
    this.remainingCount -= 1;
    return this.pick(queue, group, position, 'leader');
  }

  private close(queue: ProviderQueue, group: Group): void {
    if (group.state === 'warming') return; // closes when its leader answers
    const index = queue.open.indexOf(group);
    if (index >= 0) queue.open.splice(index, 1);
  }

  private paceWait(queue: ProviderQueue, group: Group, now: number): number {
    const rate = queue.policy.groupRequestsPerMinute;
    if (rate === undefined) return 0;
    return group.lastDispatch + MINUTE / rate - now;
  }

  private pick(queue: ProviderQueue, group: Group, position: number, role: SchedulePick['role']): SchedulePick {
    return queue.policy.sendCacheKey ? { position, role, cacheKey: promptCacheKeyOf(group.signature) } : { position, role };
  }
}

/** The cells of a `--batch` stage in the order caching wants them (see {@link batchWaves}). */
export interface BatchWaves {
  /** Positions of the first batch: one leader per prefix group, and every cell in no group. */
  leaders: number[];
  /** Positions of the second batch: the other members of each group, sent once the leaders have answered. */
  followers: number[];
  /** The `prompt_cache_key` of a position's group, where its provider takes one. */
  cacheKeyOf(position: number): string | undefined;
}

/**
 * Batch and prompt caching stacked (docs/decisions.md, "Batch runs"). A batch gives no
 * order inside it, so a group's followers sent with its leader would all miss the cache
 * the leader has not yet written. Instead the leaders (and cells in no group) go in a first,
 * small batch; once it has ended the followers go in a second batch while the prefix is
 * warm, each carrying its group's cache key. Pure.
 */
export function batchWaves(
  requests: readonly ModelRequest[],
  options: { minChars?: number; providerOf: (model: string) => string; policyOf: (provider: string) => CachePolicy },
): BatchWaves {
  const leaders: number[] = [];
  const followers: number[] = [];
  const signatureAt = new Map<number, string>();
  const seen = new Set<string>();
  requests.forEach((request, position) => {
    const signature = prefixSignature(request, options.minChars ?? DEFAULT_PREFIX_MIN_CHARS);
    if (signature === null) {
      leaders.push(position);
      return;
    }
    signatureAt.set(position, signature);
    if (seen.has(signature)) followers.push(position);
    else {
      seen.add(signature);
      leaders.push(position);
    }
  });
  return {
    leaders,
    followers,
    cacheKeyOf(position) {
      const signature = signatureAt.get(position);
      if (signature === undefined) return undefined;
      const request = requests[position]!;
      return options.policyOf(options.providerOf(request.model)).sendCacheKey ? promptCacheKeyOf(signature) : undefined;
    },
  };
}
