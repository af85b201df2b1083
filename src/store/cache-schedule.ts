import { getOrInsert } from '../core/get-or-insert.js';
import { type OpenAICacheRetention, openaiRetentionTtlMs } from '../models/cache-retention.js';
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
 *   cache key are spaced to that rate and other groups fill the free slots; a
 *   large group spreads over several cache keys (lanes, each with its own
 *   leader and rate), and when nothing else can go a lane goes past its rate:
 *   pacing reorders work, it never leaves a slot idle.
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

/** The cache settings a run can choose (config `limits.cacheTtl`, `limits.openaiCacheRetention`, `limits.promptCacheKey`). */
export interface CacheSettings {
  /** Anthropic cache lifetime: `5m` (default) or `1h` (writes cost 2× instead of 1.25×). */
  cacheTtl?: '5m' | '1h';
  /** OpenAI `prompt_cache_retention`: `in_memory` (planned as 5 minutes) or `24h` (same price). Unset online: none sent, planned as 5 minutes. */
  openaiCacheRetention?: OpenAICacheRetention;
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
        ttlMs: openaiRetentionTtlMs(settings.openaiCacheRetention),
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

/**
 * Fewest cells left per cache lane before a group opens another lane: each lane's leader
 * misses the cache, so a group's miss share stays at most about 1 in this many.
 */
export const MIN_CELLS_PER_LANE = 16;

type LaneState = 'cold' | 'warming' | 'warm';

/** The cells of one prefix group, drawn by all its lanes. */
interface Group {
  signature: string;
  members: number[];
  /** Next member to send. */
  next: number;
  /** Lanes opened so far (each with its own cache key). */
  lanes: number;
}

/**
 * One cache lane of a group: a leader warms it, followers read it. A group has one lane,
 * unless its provider routes by cache key and paces each key (OpenAI): then a group whose
 * lane is at its pace while slots are free opens another lane with its own key.
 */
interface Lane {
  group: Group;
  index: number;
  state: LaneState;
  /** The leader whose answer warms the lane. */
  leader: number;
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
  open: Lane[];
  latencyMs: number | null;
  /** `prefix-fifo` only: followers released by their leaders, and leaders plus singles in plan order. */
  fifo: { released: number[]; head: number; initial: number[]; next: number } | null;
}

const left = (group: Group) => group.members.length - group.next;

export class CacheScheduler {
  private readonly queues = new Map<string, ProviderQueue>();
  private readonly groupOf = new Map<number, Group>();
  /** Lane of each leader in flight. */
  private readonly leaderLane = new Map<number, Lane>();
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
        group = { signature, members: [], next: 0, lanes: 0 };
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

  /**
   * The next cell to send on `provider`'s free slot, or null (nothing until a call finishes).
   * A pace per cache key (OpenAI) only reorders: a lane at its pace yields to other work, a
   * large group opens another lane, and when nothing else can go the lane nearest its pace
   * goes anyway (a possible overflow costs some cache reads; an idle slot costs the run's time).
   */
  next(provider: string): SchedulePick | null {
    const queue = this.queues.get(provider);
    if (queue === undefined) return null;
    if (queue.fifo !== null) return this.nextFifo(queue);
    const now = this.options.now();
    // Lanes whose group has no cells left close once their leader (if any) has answered.
    if (queue.open.some((lane) => left(lane.group) === 0 && lane.state !== 'warming')) {
      queue.open = queue.open.filter((lane) => left(lane.group) > 0 || lane.state === 'warming');
    }
    const pending = this.pendingFollowers(queue);

    // Keep the pipeline fed: warm another group before the followers at hand run out.
    if (pending < queue.concurrency && this.canOpen(queue)) return this.openLeader(queue, now);

    let best: Lane | undefined;
    let paced: Lane | undefined;
    let pacedWait = Number.POSITIVE_INFINITY;
    for (const lane of queue.open) {
      if (lane.state !== 'warm' || left(lane.group) === 0) continue;
      const wait = this.paceWait(queue, lane, now);
      if (wait > 0) {
        if (wait < pacedWait) {
          pacedWait = wait;
          paced = lane;
        }
        continue;
      }
      if (best === undefined || lane.lastTouch < best.lastTouch) best = lane;
    }
    if (best !== undefined) return this.dispatch(queue, best, now, 'follower');
    if (this.canOpen(queue)) return this.openLeader(queue, now);
    if (queue.nextSingle < queue.singles.length) {
      this.remainingCount -= 1;
      return { position: queue.singles[queue.nextSingle++]!, role: 'single' };
    }
    if (paced !== undefined) {
      const wide = this.widestGroup(queue);
      if (wide !== undefined) return this.openLane(queue, wide, now);
      return this.dispatch(queue, paced, now, 'follower');
    }
    return null;
  }

  /** Reports a call's end: `ok` when the provider answered (its cache now holds the prefix). */
  finished(position: number, result: { ok: boolean; latencyMs: number }): void {
    const provider = this.providerAt[position];
    const queue = provider === undefined ? undefined : this.queues.get(provider);
    if (queue !== undefined && Number.isFinite(result.latencyMs) && result.latencyMs >= 0) {
      queue.latencyMs = queue.latencyMs === null ? result.latencyMs : 0.7 * queue.latencyMs + 0.3 * result.latencyMs;
    }
    const group = this.groupOf.get(position);
    if (queue?.fifo && group !== undefined && group.members[0] === position) {
      // The earlier order: a leader's answer releases all its followers at once.
      queue.fifo.released.push(...group.members.slice(1));
      return;
    }
    const lane = this.leaderLane.get(position);
    if (lane === undefined) return;
    this.leaderLane.delete(position);
    if (lane.state !== 'warming' || lane.leader !== position) return;
    if (result.ok) {
      lane.state = 'warm';
      lane.lastTouch = this.options.now();
    } else {
      // No cache was written: the next member warms it again, alone.
      lane.state = 'cold';
    }
  }

  /** Latency the scheduler currently assumes for a provider (ms). */
  latencyOf(provider: string): number {
    return this.queues.get(provider)?.latencyMs ?? this.options.initialLatencyMs ?? 30_000;
  }

  private nextFifo(queue: ProviderQueue): SchedulePick | null {
    const fifo = queue.fifo!;
    let pick: SchedulePick | null = null;
    if (fifo.head < fifo.released.length) pick = { position: fifo.released[fifo.head++]!, role: 'follower' };
    else if (fifo.next < fifo.initial.length) {
      const position = fifo.initial[fifo.next++]!;
      pick = { position, role: this.groupOf.has(position) ? 'leader' : 'single' };
    }
    if (pick !== null) this.remainingCount -= 1;
    return pick;
  }

  private queueOf(provider: string): ProviderQueue {
    return getOrInsert(this.queues, provider, () => ({
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
    }));
  }

  private pendingFollowers(queue: ProviderQueue): number {
    let pending = 0;
    let previous: Group | undefined;
    for (const lane of queue.open) {
      // A group's lanes share its cells: count them once (its lanes sit together in `open`).
      if (lane.group !== previous) pending += left(lane.group);
      previous = lane.group;
    }
    return pending;
  }

  /** Whether one more group may be warmed without pushing any open lane past its TTL. */
  private canOpen(queue: ProviderQueue): boolean {
    const cold = queue.open.some((lane) => lane.state === 'cold' && left(lane.group) > 0);
    // Re-warming an open lane opens nothing new.
    return cold || (queue.nextGroup < queue.groups.length && this.roomForLane(queue));
  }

  /** Whether the open lanes leave room for one more inside the TTL bound. */
  private roomForLane(queue: ProviderQueue): boolean {
    const open = queue.open.length;
    if (open === 0) return true;
    if (this.options.maxOpenGroups !== undefined && open >= this.options.maxOpenGroups) return false;
    const latency = this.latencyOf(queue.provider);
    // Under round-robin each open lane is touched about every open × latency / concurrency.
    const gap = latency + ((open + 1) * latency) / queue.concurrency;
    return gap <= (this.options.ttlShare ?? 0.5) * queue.policy.ttlMs;
  }

  /**
   * The open group with the most cells per lane, where one more lane keeps at least
   * {@link MIN_CELLS_PER_LANE} cells for each; only where the provider routes by cache key.
   */
  private widestGroup(queue: ProviderQueue): Group | undefined {
    const rate = queue.policy.groupRequestsPerMinute;
    if (!queue.policy.sendCacheKey || rate === undefined || !this.roomForLane(queue)) return undefined;
    // No more lanes than the slots can keep at their rate: beyond that a lane at its pace is only jitter.
    const throughput = (queue.concurrency * MINUTE) / Math.max(1, this.latencyOf(queue.provider));
    if (queue.open.length >= Math.ceil(throughput / rate)) return undefined;
    let widest: Group | undefined;
    for (const lane of queue.open) {
      const group = lane.group;
      if (left(group) < MIN_CELLS_PER_LANE * (group.lanes + 1)) continue;
      if (widest === undefined || left(group) / group.lanes > left(widest) / widest.lanes) widest = group;
    }
    return widest;
  }

  private openLeader(queue: ProviderQueue, now: number): SchedulePick {
    const cold = queue.open.find((lane) => lane.state === 'cold' && left(lane.group) > 0);
    if (cold !== undefined) return this.dispatch(queue, cold, now, 'leader');
    return this.openLane(queue, queue.groups[queue.nextGroup++]!, now);
  }

  private openLane(queue: ProviderQueue, group: Group, now: number): SchedulePick {
    const lane: Lane = { group, index: group.lanes, state: 'cold', leader: -1, lastTouch: now, lastDispatch: now };
    group.lanes += 1;
    // Keep a group's lanes next to each other in `open` (see pendingFollowers).
    const after = queue.open.findLastIndex((other) => other.group === group);
    if (after < 0) queue.open.push(lane);
    else queue.open.splice(after + 1, 0, lane);
    return this.dispatch(queue, lane, now, 'leader');
  }

  /** Hands out the lane's next cell: a leader warms the lane, a follower reads it. */
  private dispatch(queue: ProviderQueue, lane: Lane, now: number, role: 'leader' | 'follower'): SchedulePick {
    const position = lane.group.members[lane.group.next++]!;
    lane.lastTouch = now;
    lane.lastDispatch = now;
    this.remainingCount -= 1;
    if (role === 'leader') {
      lane.state = 'warming';
      lane.leader = position;
      this.leaderLane.set(position, lane);
    }
    if (!queue.policy.sendCacheKey) return { position, role };
    return { position, role, cacheKey: laneCacheKey(lane.group.signature, lane.index) };
  }

  private paceWait(queue: ProviderQueue, lane: Lane, now: number): number {
    const rate = queue.policy.groupRequestsPerMinute;
    if (rate === undefined) return 0;
    return lane.lastDispatch + MINUTE / rate - now;
  }
}

/** A lane's `prompt_cache_key`: the group's key, with the lane's number from the second lane on. */
export function laneCacheKey(signature: string, lane: number): string {
  return lane === 0 ? promptCacheKeyOf(signature) : `${promptCacheKeyOf(signature)}-${lane}`;
}

/** The cells of a `--batch` stage in the order caching wants them (see {@link batchWaves}). */
export interface BatchWaves {
  /** Positions of the first batch: one leader per prefix group, and every cell in no group. */
  leaders: number[];
  /** Positions of the second batch: the other members of each group, sent once the leaders have answered. */
  followers: number[];
  /** The `prompt_cache_key` of a position's group, where its provider takes one. */
  cacheKeyOf(position: number): string | undefined;
  /** The prefix signature of a position's group (undefined for a cell in no group). */
  signatureOf(position: number): string | undefined;
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
    signatureOf: (position) => signatureAt.get(position),
    cacheKeyOf(position) {
      const signature = signatureAt.get(position);
      if (signature === undefined) return undefined;
      const request = requests[position]!;
      return options.policyOf(options.providerOf(request.model)).sendCacheKey ? promptCacheKeyOf(signature) : undefined;
    },
  };
}

/**
 * The rule for a `--batch` stage's followers, in words, with the lifetimes the run's cache
 * settings give (the dry run prints it; docs/batch.md explains it). Kept beside
 * {@link followerRoute}, which applies it.
 */
export function batchCacheRule(settings: CacheSettings = {}): string {
  const anthropic = (settings.cacheTtl ?? '1h') === '1h' ? '1 h' : '5 min';
  const openai =
    settings.openaiCacheRetention === '24h'
      ? 'OpenAI 24 h (prompt_cache_retention "24h")'
      : settings.openaiCacheRetention === 'in_memory'
        ? 'OpenAI 5 min (prompt_cache_retention "in_memory")'
        : 'OpenAI 24 h where the model takes prompt_cache_retention "24h", which --batch then sends, else 5 min';
  return (
    `followers go in a second batch once the leaders\u2019 batch has ended; when that batch took longer than ${Math.round(FOLLOWER_TTL_SHARE * 100)}% of the cache lifetime (Anthropic ${anthropic}, ${openai}), ` +
    'the followers\u2019 batch would likely be processed after the cache expired, so echolens takes the cheaper (at the run\u2019s prices) of: re-warming each prefix group with one short online call ' +
    'just before the followers are submitted and again each lifetime (less a margin) until their batch ends, or running the followers online; after the stage it reports cache reads billed against expected and warns when the cache was lost'
  );
}

/**
 * The OpenAI prompt-cache retention a run asks for, in words (the dry run prints it;
 * docs/decisions.md#openai-cache-retention). `batch`: the run goes through `--batch`.
 */
export function openaiRetentionLine(settings: CacheSettings, batch: boolean): string {
  const price = 'billed at the same price as in-memory caching';
  if (settings.openaiCacheRetention === '24h') {
    return `OpenAI prompt-cache retention: 24h (limits.openaiCacheRetention) on every openai: call, ${price}; cached prefixes are kept up to 24 hours, which Zero Data Retention does not allow`;
  }
  if (settings.openaiCacheRetention === 'in_memory') {
    return 'OpenAI prompt-cache retention: in_memory (limits.openaiCacheRetention) on every openai: call; cached prefixes last about 5\u201310 minutes unused (at most 1 hour), planned as 5 minutes';
  }
  if (batch) {
    return `OpenAI prompt-cache retention: 24h on the prefix groups\u2019 batch lines of models that take it (${price}; limits.openaiCacheRetention: in_memory keeps the in-memory cache), none sent otherwise (planned as 5 minutes)`;
  }
  return 'OpenAI prompt-cache retention: none sent (the provider\u2019s default); planned as 5 minutes; limits.openaiCacheRetention sets in_memory or 24h';
}

/** Share of the cache lifetime a follower batch may take, from the leaders' answer, and still count on the cache. */
export const FOLLOWER_TTL_SHARE = 0.8;

/** What the followers of one provider would cost each way (USD, summed over the provider's groups). */
export interface FollowerCosts {
  /** One short online call per group reading its live cache (a refresh). */
  refreshRead: number;
  /** One short online call per group writing its cache again (the cache already expired). */
  refreshWrite: number;
  /** Every follower in a batch, reading the cache. */
  batchCached: number;
  /** Every follower in a batch, missing the cache (each writes it again where breakpoints ask to). */
  batchMissed: number;
  /** Every follower online, reading the cache. */
  onlineCached: number;
}

export interface FollowerRouteInput {
  /** Cache lifetime after the last use (ms). */
  ttlMs: number;
  /** When the leaders' batch was seen ended (their caches written no later than this). */
  writtenAt: number;
  /** When the followers would be submitted. */
  now: number;
  /** How long the leaders' batch took, submission to collection: the follower batch is expected to take as long. */
  turnaroundMs: number;
  /** Time between polls: a refresh can come this late. */
  pollIntervalMs: number;
  costs: FollowerCosts;
}

export interface FollowerRoute {
  route: 'batch' | 'rewarm' | 'online';
  /** Expected bill of the route chosen and of the others (USD). */
  expected: { batch: number; rewarm: number; online: number };
  /** `rewarm`: time between refreshes, and the refreshes expected (the first one before submission). */
  refreshEveryMs: number;
  refreshes: number;
  /** One line saying why. */
  reason: string;
}

/**
 * Where a `--batch` stage's followers go ({@link BATCH_CACHE_RULE}). `batch` when the cache the
 * leaders wrote is expected to outlive the follower batch; otherwise the cheaper of `rewarm`
 * (keep the cache alive with short online calls while the follower batch waits) and `online`.
 * The expected bill of `batch` counts every follower as a miss when the cache is not expected to
 * last. Pure.
 */
export function followerRoute(input: FollowerRouteInput): FollowerRoute {
  const { ttlMs, writtenAt, now, turnaroundMs, pollIntervalMs, costs } = input;
  const minutes = (ms: number) => `${(ms / MINUTE).toFixed(ms < 10 * MINUTE ? 1 : 0)} min`;
  const lasts = now + turnaroundMs <= writtenAt + FOLLOWER_TTL_SHARE * ttlMs;
  const alive = now < writtenAt + ttlMs;
  // A refresh may come one poll late: refresh a margin before the lifetime ends.
  const refreshEveryMs = Math.max(MINUTE / 2, ttlMs - Math.max(2 * pollIntervalMs, 0.1 * ttlMs));
  const refreshes = 1 + Math.ceil(turnaroundMs / refreshEveryMs);
  const rewarm = (alive ? costs.refreshRead : costs.refreshWrite) + (refreshes - 1) * costs.refreshRead + costs.batchCached;
  const online = (alive ? 0 : costs.refreshWrite) + costs.onlineCached;
  const batch = lasts ? costs.batchCached : costs.batchMissed;
  const expected = { batch, rewarm, online };
  // Only `rewarm` refreshes; every route states the same bills and refresh period.
  const routed = (route: FollowerRoute['route'], reason: string): FollowerRoute => ({
    route,
    expected,
    refreshEveryMs,
    refreshes: route === 'rewarm' ? refreshes : 0,
    reason,
  });
  if (lasts) {
    return routed(
      'batch',
      `the leaders' batch took ${minutes(turnaroundMs)}, within ${Math.round(FOLLOWER_TTL_SHARE * 100)}% of the ${minutes(ttlMs)} cache lifetime: followers go in a batch`,
    );
  }
  const why = `the leaders' batch took ${minutes(turnaroundMs)}; a follower batch as slow would outlive the ${minutes(ttlMs)} cache lifetime`;
  if (rewarm <= online && rewarm < batch) {
    return routed(
      'rewarm',
      `${why}: re-warming each group online every ${minutes(refreshEveryMs)} while the followers' batch waits (expected $${rewarm.toFixed(4)}; online $${online.toFixed(4)}, a batch missing the cache $${batch.toFixed(4)})`,
    );
  }
  if (online < batch) {
    return routed(
      'online',
      `${why}: the followers run online (expected $${online.toFixed(4)}; re-warming $${rewarm.toFixed(4)}, a batch missing the cache $${batch.toFixed(4)})`,
    );
  }
  return routed(
    'batch',
    `${why}, but a batch missing the cache is still the cheapest (expected $${batch.toFixed(4)}; re-warming $${rewarm.toFixed(4)}, online $${online.toFixed(4)})`,
  );
}
