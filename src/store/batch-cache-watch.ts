import type { BatchProvider } from '../models/batch/index.js';
import { BATCH_DISCOUNT } from '../models/batch-prices.js';
import { getOrInsert } from '../core/get-or-insert.js';
import { type GenerateOptions, type ModelRequest, type TokenUsage, ZERO_USAGE } from '../models/types.js';
import type { BatchSession } from './batch-session.js';
import { cachePolicyFor, type FollowerCosts, type FollowerRoute, followerRoute } from './cache-schedule.js';
import type { CellOutcome } from './run-store.js';
import { providerOf } from './runner-options.js';
import type { AdapterFactory, BatchCacheReport, CostFn } from './runner-types.js';
import { estimateInputTokens } from './schedule.js';

/**
 * The prompt cache of a `--batch` stage (issue 44; docs/batch.md "When the queue outlives the
 * cache"). Leaders go in a first batch and write each prefix group's cache; the followers, in a
 * second batch, read it — if it is still alive when the provider gets to them. This watch:
 *
 * - records when the leaders' caches were written (the leaders' batch seen ended) and how long
 *   that batch took, and routes each provider's followers by {@link followerRoute}: a batch,
 *   a batch kept warm by short online calls (`rewarm`), or online;
 * - makes the re-warm calls: one per group before the followers are submitted, then one per
 *   group each refresh interval while their batch is open (from the poll loop);
 * - counts, as the followers are collected, the cache reads they were billed against the reads
 *   expected (one per follower), and warns when the cache was lost.
 */

/** Output tokens a follower is expected to give, for comparing routes (the estimate's figure). */
const EXPECTED_OUTPUT_TOKENS = 400;
/** Followers that read the cache, as a share of those expected, below which the cache counts as lost. */
const LOST_BELOW = 0.5;

export interface FollowerGroup {
  provider: string;
  model: string;
  leaderKey: string;
  followerKeys: string[];
  cacheOptions: Pick<GenerateOptions, 'promptCacheKey' | 'cacheTtl' | 'promptCacheRetention'>;
}

interface ProviderPlan {
  provider: string;
  decision: FollowerRoute;
  groups: FollowerGroup[];
  nextRefreshAt: number;
}

export interface FollowerPlan {
  batch: string[];
  online: string[];
  /** Providers whose followers go in a batch kept warm. */
  rewarm: ProviderPlan[];
}

export class BatchCacheWatch {
  private readonly followers = new Set<string>();
  private billedReads = 0;
  private followersAnswered = 0;
  private rewarmCalls = 0;
  private rewarmHits = 0;
  private rewarmUsd = 0;
  private rewarmSkipped = 0;
  /** The worst case the followers' batch reserved against --max-cost (a refresh must leave it room). */
  private followersReservedUsd = 0;
  private plans: ProviderPlan[] = [];
  private leadersTurnaroundMs = 0;
  private followersSubmittedAt = 0;

  constructor(
    private readonly session: BatchSession,
    private readonly groups: readonly FollowerGroup[],
    /** The Anthropic cache lifetime of the stage's batch lines. */
    private readonly anthropicTtl: '5m' | '1h',
    /** Online price of a call of a provider (Anthropic 1-hour writes at their price). */
    private readonly onlineCostFor: (provider: string) => CostFn,
  ) {
    for (const group of groups) for (const key of group.followerKeys) this.followers.add(key);
  }

  /** The collection hook (batch-collect.ts): the followers answered and their billed cache reads. */
  readonly onCollected = (key: string, outcome: CellOutcome): void => {
    if (outcome.status === 'failed' || !this.followers.has(key)) return;
    this.followersAnswered += 1;
    if (outcome.usage.cachedInputTokens > 0) this.billedReads += 1;
  };

  /**
   * The cache lifetime the provider's followers can count on: the shortest of its groups' (an
   * OpenAI group's follows the retention its lines ask for, `24h` or in-memory).
   */
  private ttlMsOf(provider: string, groups: readonly FollowerGroup[]): number {
    // `plan` asks only for providers with groups.
    return Math.min(
      ...groups.map((group) => cachePolicyFor(provider, { cacheTtl: this.anthropicTtl, openaiCacheRetention: group.cacheOptions.promptCacheRetention }).ttlMs),
    );
  }

  /**
   * Routes each provider's followers once the leaders' batch has been collected: `submittedAt`
   * is when the leaders were submitted, `now` when their batch was seen ended.
   */
  plan(submittedAt: number, now: number): FollowerPlan {
    const { session } = this;
    const pollIntervalMs = session.options.pollIntervalMs ?? 30_000;
    this.leadersTurnaroundMs = now - submittedAt;
    const byProvider = new Map<string, FollowerGroup[]>();
    for (const group of this.groups) {
      // A group whose leader failed has no cache yet: a batch route misses it, a re-warm call writes it.
      getOrInsert(byProvider, group.provider, () => []).push(group);
    }
    const out: FollowerPlan = { batch: [], online: [], rewarm: [] };
    for (const [provider, groups] of byProvider) {
      const keys = groups.flatMap((group) => group.followerKeys);
      const decision = followerRoute({
        ttlMs: this.ttlMsOf(provider, groups),
        writtenAt: now,
        now,
        turnaroundMs: this.leadersTurnaroundMs,
        pollIntervalMs,
        costs: this.costsOf(provider, groups),
      });
      session.notify(`batch: ${provider} followers: ${decision.reason}`);
      if (decision.route === 'online') out.online.push(...keys);
      else out.batch.push(...keys);
      const plan = { provider, decision, groups, nextRefreshAt: decision.route === 'rewarm' ? now : Number.POSITIVE_INFINITY };
      this.plans.push(plan);
      if (decision.route === 'rewarm') out.rewarm.push(plan);
    }
    return out;
  }

  /** Followers that ran online: answered, and how many of them read the cache. */
  onlineFollowers(answered: number, cacheReads: number): void {
    this.followersAnswered += answered;
    this.billedReads += cacheReads;
  }

  /** The followers' batch is being submitted now (after the first refresh). */
  followersSubmitted(at: number): void {
    this.followersSubmittedAt = at;
  }

  /** What the followers' batch reserved against --max-cost once submitted. */
  followersReserved(usd: number): void {
    this.followersReservedUsd = usd;
  }

  /** Called from the poll loop (and before the followers are submitted): refreshes the groups whose time has come. */
  async tick(): Promise<void> {
    const now = (this.session.options.now ?? Date.now)();
    for (const plan of this.plans) {
      if (plan.decision.route !== 'rewarm' || now < plan.nextRefreshAt || this.session.tally.stopped) continue;
      plan.nextRefreshAt = now + plan.decision.refreshEveryMs;
      for (const group of plan.groups) await this.refresh(group);
    }
  }

  /** One short online call with the group's leader prompt: it reads (and so keeps alive) or writes the group's cache. */
  private async refresh(group: FollowerGroup): Promise<void> {
    const { session } = this;
    const request = session.requestOf.get(group.leaderKey);
    if (request === undefined) return;
    if (!this.fitsBudget(group, request)) return;
    const adapterFor = session.options.adapterFor ?? envAdapterFactory(session.env);
    try {
      const adapter = await adapterFor(request.model);
      const response = await adapter.generate(
        { ...request, params: { ...request.params, maxTokens: 1 } },
        { ...group.cacheOptions, ...(session.options.hardSignal ? { signal: session.options.hardSignal } : {}) },
      );
      this.rewarmCalls += 1;
      if (response.usage.cachedInputTokens > 0) this.rewarmHits += 1;
      const cost = this.onlineCostFor(group.provider)(request.model, response.usage);
      session.tally.calls += 1;
      if (typeof cost === 'number' && Number.isFinite(cost)) {
        this.rewarmUsd += cost;
        session.tally.spendUsd += cost;
        session.tally.naiveUsd += cost;
      }
    } catch (error) {
      session.notify(
        `warning: re-warming the prompt cache of a ${group.provider} prefix group failed (${(error as Error).message}); its followers may miss the cache`,
      );
    }
  }

  /**
   * A refresh is reserved against --max-cost like any cell: its worst case (the whole prefix
   * written again, one output token) must fit beside what was spent and what the followers'
   * batch reserved; otherwise it is skipped (the followers may then miss the cache) and said once.
   */
  private fitsBudget(group: FollowerGroup, request: ModelRequest): boolean {
    const { options, tally } = this.session;
    if (options.maxCostUsd === undefined) return true;
    const prefix = prefixTokens(request);
    const usage = { ...ZERO_USAGE, inputTokens: prefix, cacheWriteTokens: group.provider === 'anthropic' ? prefix : 0, outputTokens: 1 };
    const worst = this.onlineCostFor(group.provider)(request.model, usage);
    // Unpriced: nothing to reserve (an unknown price never counts against the budget).
    if (typeof worst !== 'number' || !Number.isFinite(worst)) return true;
    const committed = (options.spentBeforeUsd ?? 0) + tally.spendUsd + this.followersReservedUsd;
    if (committed + worst <= options.maxCostUsd) return true;
    if (this.rewarmSkipped === 0) {
      this.session.notify(
        `warning: not re-warming the prompt cache: a re-warm call could cost up to $${worst.toFixed(4)}, and $${committed.toFixed(4)} of --max-cost $${options.maxCostUsd} is spent or reserved; the followers may miss the cache`,
      );
    }
    this.rewarmSkipped += 1;
    return false;
  }

  /** The expected bill of each route for a provider's followers (online prices from the run's price table). */
  private costsOf(provider: string, groups: readonly FollowerGroup[]): FollowerCosts {
    const online = this.onlineCostFor(provider);
    const writes = provider === 'anthropic';
    const discount = BATCH_DISCOUNT[provider as BatchProvider] ?? 0.5;
    const costs: FollowerCosts = { refreshRead: 0, refreshWrite: 0, batchCached: 0, batchMissed: 0, onlineCached: 0 };
    for (const group of groups) {
      const leader = this.session.requestOf.get(group.leaderKey);
      if (leader === undefined) continue;
      const prefix = prefixTokens(leader);
      const price = (usage: Partial<TokenUsage>) => priceOf(online, group.model, provider, { ...ZERO_USAGE, ...usage });
      costs.refreshRead += price({ inputTokens: prefix, cachedInputTokens: prefix, outputTokens: 1 });
      costs.refreshWrite += price({ inputTokens: prefix, cacheWriteTokens: writes ? prefix : 0, outputTokens: 1 });
      for (const key of group.followerKeys) {
        const request = this.session.requestOf.get(key);
        if (request === undefined) continue;
        const input = Math.max(prefix, estimateInputTokens(request));
        const output = Math.min(request.params?.maxTokens ?? EXPECTED_OUTPUT_TOKENS, EXPECTED_OUTPUT_TOKENS);
        const cached = price({ inputTokens: input, cachedInputTokens: prefix, outputTokens: output });
        costs.onlineCached += cached;
        costs.batchCached += cached * discount;
        costs.batchMissed += price({ inputTokens: input, cacheWriteTokens: writes ? prefix : 0, outputTokens: output }) * discount;
      }
    }
    return costs;
  }

  /** After the stage: cache reads billed against expected; a warning line when the cache was lost. */
  report(now: number): BatchCacheReport {
    const expectedReads = this.followersAnswered;
    const lost = expectedReads > 0 && this.billedReads < LOST_BELOW * expectedReads;
    const report: BatchCacheReport = {
      expectedReads,
      billedReads: this.billedReads,
      lost,
      leadersTurnaroundMs: this.leadersTurnaroundMs,
      followersTurnaroundMs: this.followersSubmittedAt > 0 ? now - this.followersSubmittedAt : 0,
      routes: Object.fromEntries(this.plans.map((plan) => [plan.provider, plan.decision.route])),
      rewarmCalls: this.rewarmCalls,
      rewarmHits: this.rewarmHits,
      rewarmUsd: this.rewarmUsd,
      rewarmSkipped: this.rewarmSkipped,
    };
    if (this.plans.length === 0) return report;
    const { notify } = this.session;
    notify(
      `batch: prompt-cache reads billed to followers: ${this.billedReads} of ${expectedReads} expected` +
        (this.rewarmCalls > 0 ? `; ${this.rewarmCalls} re-warm calls ($${this.rewarmUsd.toFixed(4)}, ${this.rewarmHits} read the cache)` : ''),
    );
    if (lost) {
      const minutes = (ms: number) => `${(ms / 60_000).toFixed(0)} min`;
      notify(
        `warning: the prompt cache was lost: only ${this.billedReads} of ${expectedReads} followers read the cache their leaders wrote ` +
          `(the leaders' batch took ${minutes(report.leadersTurnaroundMs)}, the followers' ${minutes(report.followersTurnaroundMs)}); ` +
          'the provider queued them past the cache lifetime, and they were billed as uncached',
      );
    }
    return report;
  }
}

/** Input tokens up to the request's last cache breakpoint, else all but its last message: what a group shares. */
function prefixTokens(request: ModelRequest): number {
  const messages = request.messages;
  let end = messages.findLastIndex((message) => message.cacheBreakpoint === true);
  if (end < 0) end = messages.length - 2;
  return estimateInputTokens({ ...request, messages: messages.slice(0, end + 1) });
}

/**
 * A call's price from the run's cost function; without a known price, relative weights in
 * input-token units (cache reads 0.1 Anthropic / 0.25 OpenAI-style, Anthropic writes 1.25,
 * output 4): enough to compare routes.
 */
function priceOf(costOf: CostFn, model: string, provider: string, usage: TokenUsage): number {
  const known = costOf(model, usage);
  if (typeof known === 'number' && Number.isFinite(known) && known > 0) return known;
  const readRate = provider === 'anthropic' ? 0.1 : 0.25;
  const plain = usage.inputTokens - usage.cachedInputTokens - usage.cacheWriteTokens;
  return (plain + readRate * usage.cachedInputTokens + 1.25 * usage.cacheWriteTokens + 4 * usage.outputTokens) / 1e6;
}

/** The followers' groups from the stage's waves: each group's leader and followers by key. */
export function followerGroups(
  leaders: readonly string[],
  followers: readonly string[],
  signatureOf: (key: string) => string | undefined,
  requestOf: ReadonlyMap<string, ModelRequest>,
  cacheOf: (key: string) => Pick<GenerateOptions, 'promptCacheKey' | 'cacheTtl' | 'promptCacheRetention'>,
): FollowerGroup[] {
  const groups = new Map<string, FollowerGroup>();
  for (const key of leaders) {
    const signature = signatureOf(key);
    if (signature === undefined) continue;
    const model = requestOf.get(key)!.model;
    groups.set(signature, { provider: providerOf(model), model, leaderKey: key, followerKeys: [], cacheOptions: cacheOf(key) });
  }
  for (const key of followers) {
    const signature = signatureOf(key);
    if (signature !== undefined) groups.get(signature)?.followerKeys.push(key);
  }
  return [...groups.values()].filter((group) => group.followerKeys.length > 0);
}

/** Online adapters reading keys and base URLs where the batch clients read them (the run's `env`). */
export function envAdapterFactory(env: Record<string, string | undefined>): AdapterFactory {
  return async (ref) => {
    const models = await import('../models/index.js');
    return models.createAdapter(ref, { env });
  };
}
