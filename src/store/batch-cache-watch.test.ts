import { describe, expect, it } from 'vitest';
import type { FakeRequest } from '../models/testing/index.js';
import type { ChatMessage, TokenUsage } from '../models/types.js';
import { BatchCacheWatch } from './batch-cache-watch.js';
import { type RunCellsBatchOptions, runCellsBatch } from './batch-runner.js';
import type { BatchSession } from './batch-session.js';
import { type FollowerCosts, followerRoute } from './cache-schedule.js';
import { RunStore } from './run-store.js';
import { fakeBatchKit } from './testing/batch-kit.js';
import { TEST_MANIFEST } from './testing/fakes.js';
import type { CellSpec } from './types.js';

// Issue 44: a batch that outlives the prompt cache — re-warm, online fallback, and the warning.

const MINUTE = 60_000;
const env = { OPENAI_API_KEY: 'sk-cache-watch', ANTHROPIC_API_KEY: 'ak-cache-watch' };
const { fake, storeFile } = fakeBatchKit('echolens-batch-cache-watch-');

describe('followerRoute', () => {
  const costs: FollowerCosts = { refreshRead: 1, refreshWrite: 10, batchCached: 20, batchMissed: 100, onlineCached: 40 };
  const base = { ttlMs: 60 * MINUTE, writtenAt: 0, now: 0, pollIntervalMs: MINUTE, costs };

  it('keeps the followers in a batch while the leaders’ turnaround stays within 80% of the lifetime', () => {
    const decision = followerRoute({ ...base, turnaroundMs: 48 * MINUTE });
    expect(decision.route).toBe('batch');
    expect(decision.expected.batch).toBe(20);
    expect(decision.reason).toMatch(/took 48 min, within 80% of the 60 min cache lifetime/);
    expect(followerRoute({ ...base, turnaroundMs: 49 * MINUTE }).route).not.toBe('batch');
  });

  it('re-warms when the queue is longer, refreshing a margin before each lifetime ends', () => {
    const decision = followerRoute({ ...base, turnaroundMs: 65 * MINUTE });
    expect(decision.route).toBe('rewarm');
    // 60 min less max(2 polls, 10% of the lifetime) = 54 min; one refresh now and two while 65 min pass.
    expect(decision.refreshEveryMs).toBe(54 * MINUTE);
    expect(decision.refreshes).toBe(3);
    expect(decision.expected.rewarm).toBe(3 * 1 + 20);
    // An expired cache is written again first.
    expect(followerRoute({ ...base, now: 61 * MINUTE, turnaroundMs: 65 * MINUTE }).expected.rewarm).toBe(10 + 2 * 1 + 20);
  });

  it('sends the followers online when refreshing a short lifetime costs more, and keeps a missing batch when that is cheapest', () => {
    const short = { ...base, ttlMs: 5 * MINUTE, turnaroundMs: 65 * MINUTE };
    const online = followerRoute(short);
    expect(online.route).toBe('online');
    expect(online.expected.rewarm).toBeGreaterThan(online.expected.online);
    expect(online.reason).toMatch(/followers run online/);
    const missing = followerRoute({ ...short, costs: { ...costs, batchMissed: 30 } });
    expect(missing.route).toBe('batch');
    expect(missing.reason).toMatch(/a batch missing the cache is still the cheapest/);
  });
});

describe('re-warm calls under --max-cost', () => {
  /** A watch over two Anthropic groups whose leaders took 70 minutes (so it re-warms), its session's spend and calls. */
  function watchWith(maxCostUsd: number | undefined, spendUsd: number) {
    const specs = grid('anthropic:claude-sonnet-4-5', 2, 3);
    const requestOf = new Map(specs.map((spec, index) => [`k${index}`, spec.request]));
    const calls: number[] = [];
    const notes: string[] = [];
    const session = {
      options: {
        pollIntervalMs: 5 * MINUTE,
        now: () => 70 * MINUTE,
        ...(maxCostUsd === undefined ? {} : { maxCostUsd }),
        adapterFor: async () => ({
          generate: async (request: { params?: { maxTokens?: number } }) => {
            calls.push(request.params?.maxTokens ?? -1);
            return { text: 'ok', usage: { inputTokens: 6000, outputTokens: 1, cachedInputTokens: 5900, cacheWriteTokens: 0, reasoningTokens: 0 } };
          },
        }),
      },
      tally: { spendUsd, naiveUsd: spendUsd, calls: 0, stopped: false },
      requestOf,
      notify: (line: string) => notes.push(line),
    } as unknown as BatchSession;
    // A refresh (one output token) costs $1, a follower $10 reading the cache and $50 writing it
    // (half that in a batch): re-warming is the cheapest route, and a refresh's worst case is $1.
    const groups = [0, 1].map((group) => ({
      provider: 'anthropic',
      model: 'anthropic:claude-sonnet-4-5',
      leaderKey: `k${group}`,
      followerKeys: [`k${group + 2}`, `k${group + 4}`],
      cacheOptions: {},
    }));
    const price = (_model: string, usage: TokenUsage) => (usage.outputTokens === 1 ? 1 : usage.cacheWriteTokens > 0 ? 50 : 10);
    const watch = new BatchCacheWatch(session, groups, '1h', () => price);
    expect(watch.plan(0, 70 * MINUTE).rewarm).toHaveLength(1);
    return { watch, calls, notes, session };
  }

  it('makes a refresh whose worst case fits beside the spend and the followers’ reservation', async () => {
    const { watch, calls, notes } = watchWith(10, 5);
    watch.followersReserved(2);
    await watch.tick();
    expect(calls).toEqual([1, 1]);
    expect(notes.some((n) => n.startsWith('warning:'))).toBe(false);
    expect(watch.report(70 * MINUTE)).toMatchObject({ rewarmCalls: 2, rewarmSkipped: 0 });
  });

  it('skips a refresh that could pass --max-cost, says so once, and counts it', async () => {
    // $5 spent + $2 reserved + $1 + $1 > $8.5: the second group's refresh does not fit.
    const { watch, calls, notes, session } = watchWith(8.5, 5);
    watch.followersReserved(2);
    await watch.tick();
    expect(calls).toEqual([1]);
    expect(session.tally.spendUsd).toBeLessThanOrEqual(8.5);
    const warnings = notes.filter((n) => n.startsWith('warning: not re-warming'));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('--max-cost $8.5');
    expect(watch.report(70 * MINUTE)).toMatchObject({ rewarmCalls: 1, rewarmSkipped: 1 });
  });

  it('reserves nothing without --max-cost', async () => {
    const { watch, calls } = watchWith(undefined, 1_000);
    watch.followersReserved(1_000);
    await watch.tick();
    expect(calls).toEqual([1, 1]);
  });
});

/** `groups` contexts of ~24,000 characters with a breakpoint after them, `probes` probes each. */
function grid(model: string, groups: number, probes: number): CellSpec[] {
  const specs: CellSpec[] = [];
  for (let probe = 0; probe < probes; probe += 1) {
    for (let group = 0; group < groups; group += 1) {
      const messages: ChatMessage[] = [
        { role: 'user', content: `Session ${group}: ${'read the file, run the tests, fix the bug. '.repeat(600)}` },
        { role: 'assistant', content: 'Understood.', cacheBreakpoint: true },
        { role: 'user', content: `Probe ${probe}?` },
      ];
      specs.push({ request: { model, messages, params: { maxTokens: 64 }, sample: 0 }, labels: { group, probe } });
    }
  }
  return specs;
}

/**
 * A fake provider cache on a fake clock: a call reads its group's prefix when the prefix was
 * last touched within its lifetime, and touches it (a write or a read refreshes it). The
 * lifetime is `ttlMs`, or 24 hours from a touch whose body asked OpenAI for `"24h"` retention.
 */
function cacheModel(clock: () => number, ttlMs: number) {
  const touched = new Map<string, { at: number; by: string; ttlMs: number; before: { at: number; ttlMs: number } | undefined }>();
  const log: Array<{ batch: boolean; maxTokens: number; read: boolean; at: number }> = [];
  const respond = (request: FakeRequest) => {
    const body = request.body ?? {};
    const raw = JSON.stringify(body);
    const group = /Session (\d+)/.exec(raw)?.[1] ?? '?';
    const at = clock();
    // Lines of one batch run side by side: none reads what another line of its batch writes.
    const by = request.headers['x-fake-batch-id'] ?? `online-${request.index}`;
    const last = touched.get(group);
    const source = last !== undefined && last.by === by ? last.before : last;
    const read = source !== undefined && at - source.at <= source.ttlMs;
    const lifetime = body.prompt_cache_retention === '24h' ? 24 * 60 * MINUTE : ttlMs;
    if (last === undefined || last.by !== by) touched.set(group, { at, by, ttlMs: lifetime, before: last });
    const maxTokens = Number((body.max_tokens ?? body.max_completion_tokens ?? 0) as number);
    log.push({ batch: request.headers['x-fake-batch-id'] !== undefined, maxTokens, read, at });
    const text = raw.includes('Probe') ? `answer ${raw.length}` : 'ok';
    return { text, usage: { inputTokens: 6000, outputTokens: 10, cachedInputTokens: read ? 5900 : 0, cacheWriteTokens: read ? 0 : 5900 } };
  };
  return { respond, log };
}

/** Time that passes only when the runner sleeps between polls: the tests wait for nothing. */
function fakeTime() {
  let at = 0;
  return {
    now: () => at,
    sleep: async (ms: number) => {
      at += ms;
    },
  };
}

/**
 * A `groups × perGroup` grid as one --batch stage in a fresh store: a fake provider (batches done
 * on the 15th poll) over a prompt cache of `ttlMs`, polled every 5 minutes of fake time.
 */
async function batchOverCache(o: {
  provider: 'anthropic' | 'openai';
  model: string;
  ttlMs: number;
  runId: string;
  groups: number;
  perGroup: number;
  followerRoute?: 'batch';
  cache?: RunCellsBatchOptions['cache'];
}) {
  const time = fakeTime();
  const cache = cacheModel(time.now, o.ttlMs);
  const server = await fake({ provider: o.provider, respond: cache.respond, pollsUntilDone: 14 });
  const store = RunStore.open(storeFile(), { env: {} });
  const notes: string[] = [];
  try {
    const runId = await store.createRun(TEST_MANIFEST, { id: o.runId });
    const summary = await runCellsBatch(store, runId, grid(`${o.provider}:${o.model}@${server.baseURL}`, o.groups, o.perGroup), {
      env,
      pollIntervalMs: 5 * MINUTE,
      ...time,
      notify: (line) => notes.push(line),
      ...(o.followerRoute === undefined ? {} : { followerRoute: o.followerRoute }),
      ...(o.cache === undefined ? {} : { cache: o.cache }),
    });
    return { summary, notes, cache, server };
  } finally {
    await store.close();
  }
}

describe('a --batch stage whose queue outlives the cache', () => {
  it('anthropic: leaders that took 70 minutes make the run re-warm each group online while the followers wait, and the followers read the cache', async () => {
    // Each batch ends on its 15th poll: 14 polls 5 minutes apart, about 70 minutes.
    const { summary, notes, cache } = await batchOverCache({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      ttlMs: 60 * MINUTE,
      runId: 'rewarm',
      groups: 2,
      perGroup: 12,
    });
    expect(summary).toMatchObject({ status: 'done', done: 24, failed: 0 });
    expect(notes.join('\n')).toMatch(
      /anthropic followers: the leaders' batch took 70 min; a follower batch as slow would outlive the 60 min cache lifetime: re-warming/,
    );
    const refreshes = cache.log.filter((entry) => !entry.batch);
    // One refresh per group before the followers go, and again 50 minutes later (60 less 2 polls).
    expect(refreshes.map((entry) => [entry.maxTokens, entry.at])).toEqual([
      [1, 70 * MINUTE],
      [1, 70 * MINUTE],
      [1, 120 * MINUTE],
      [1, 120 * MINUTE],
    ]);
    const followers = cache.log.filter((entry) => entry.batch).slice(2);
    expect(followers).toHaveLength(22);
    expect(followers.map((entry) => [entry.read, entry.at / MINUTE])).toEqual(followers.map(() => [true, 140]));
    expect(summary.batchCache).toMatchObject({
      expectedReads: 22,
      billedReads: 22,
      lost: false,
      routes: { anthropic: 'rewarm' },
      rewarmCalls: 4,
      rewarmHits: 4,
    });
    expect(notes.some((n) => n.includes('prompt-cache reads billed to followers: 22 of 22 expected; 4 re-warm calls'))).toBe(true);
    expect(notes.some((n) => n.startsWith('warning:'))).toBe(false);
    // The same queue with the followers always batched: every follower misses, and nothing re-warms.
    // A store of its own: in the first one these cells are answered already.
    const { summary: before, server: again } = await batchOverCache({
      provider: 'anthropic',
      model: 'claude-sonnet-4-5',
      ttlMs: 60 * MINUTE,
      runId: 'always-batch',
      groups: 2,
      perGroup: 12,
      followerRoute: 'batch',
    });
    expect(before).toMatchObject({ status: 'done', done: 24, failed: 0 });
    expect(before.cacheReadCells).toBe(0);
    expect(before.batchCache).toBeUndefined();
    expect(again.submissions.size).toBe(24);
  });

  it('openai: with the in-memory retention (5-minute lifetime) the followers run online, reading the cache their leaders wrote', async () => {
    const { summary, notes, cache, server } = await batchOverCache({
      provider: 'openai',
      model: 'gpt-4.1',
      ttlMs: 5 * MINUTE,
      runId: 'online',
      groups: 2,
      perGroup: 4,
      cache: { openaiCacheRetention: 'in_memory' },
    });
    expect(summary).toMatchObject({ status: 'done', done: 8, failed: 0 });
    expect(server.batches.map((b) => b.customIds.length)).toEqual([2]);
    // The config's retention goes on every line, as set.
    expect(server.batches[0]!.lines.map((l) => l.body.prompt_cache_retention)).toEqual(['in_memory', 'in_memory']);
    expect(notes.join('\n')).toMatch(/openai followers: .*: the followers run online/);
    expect(notes.some((n) => n.includes('running 6 followers online'))).toBe(true);
    const online = cache.log.filter((entry) => !entry.batch);
    expect(online).toHaveLength(6);
    expect(online.every((entry) => entry.read)).toBe(true);
    expect(summary.batchCache).toMatchObject({ expectedReads: 6, billedReads: 6, lost: false, routes: { openai: 'online' } });
  });

  it('openai: a model that takes 24-hour retention gets it by default, and its followers stay in a batch past 70 minutes and read the cache', async () => {
    // The provider keeps a prefix 5 minutes, unless the request asked for "24h".
    const { summary, notes, cache, server } = await batchOverCache({
      provider: 'openai',
      model: 'gpt-4.1',
      ttlMs: 5 * MINUTE,
      runId: 'extended',
      groups: 2,
      perGroup: 4,
    });
    expect(summary).toMatchObject({ status: 'done', done: 8, failed: 0 });
    expect(server.batches.map((b) => b.customIds.length)).toEqual([2, 6]);
    for (const batch of server.batches) {
      for (const line of batch.lines) {
        expect(line.body.prompt_cache_retention).toBe('24h');
        expect(line.body.prompt_cache_key).toMatch(/^echolens-/);
      }
    }
    expect(notes.join('\n')).toMatch(/openai followers: the leaders' batch took 70 min, within 80% of the 1440 min cache lifetime: followers go in a batch/);
    expect(cache.log.filter((entry) => !entry.batch)).toHaveLength(0);
    expect(
      cache.log
        .filter((entry) => entry.batch)
        .slice(2)
        .every((entry) => entry.read),
    ).toBe(true);
    expect(summary.batchCache).toMatchObject({ expectedReads: 6, billedReads: 6, lost: false, routes: { openai: 'batch' }, rewarmCalls: 0 });
  });

  it('openai: a model not listed for 24-hour retention is sent none and planned with the in-memory lifetime', async () => {
    const { summary, notes, server } = await batchOverCache({
      provider: 'openai',
      model: 'gpt-4o',
      ttlMs: 5 * MINUTE,
      runId: 'no-extended',
      groups: 2,
      perGroup: 4,
    });
    expect(summary).toMatchObject({ status: 'done', done: 8, failed: 0 });
    expect(server.batches[0]!.lines.every((l) => !('prompt_cache_retention' in l.body))).toBe(true);
    expect(notes.join('\n')).toMatch(/openai followers: the leaders' batch took 70 min; a follower batch as slow would outlive the 5.0 min cache lifetime/);
  });

  it('warns when the followers’ batch was queued past the lifetime although the leaders’ was quick', async () => {
    let clock = 0;
    let step = MINUTE;
    const cache = cacheModel(() => clock, 60 * MINUTE);
    const server = await fake({ provider: 'anthropic', respond: cache.respond, pollsUntilDone: 2 });
    const store = RunStore.open(storeFile(), { env: {} });
    const runId = await store.createRun(TEST_MANIFEST, { id: 'lost' });
    const notes: string[] = [];
    const summary = await runCellsBatch(store, runId, grid(`anthropic:claude-sonnet-4-5@${server.baseURL}`, 2, 3), {
      env,
      pollIntervalMs: MINUTE,
      now: () => clock,
      // The provider's queue slows down once the followers are in it: each poll is 40 minutes apart.
      sleep: async () => {
        clock += step;
      },
      notify: (line) => {
        notes.push(line);
        if (line.includes('submitting 4 cells that read their prompt cache')) step = 40 * MINUTE;
      },
    });
    expect(summary).toMatchObject({ status: 'done', done: 6 });
    expect(notes.join('\n')).toMatch(/anthropic followers: the leaders' batch took 2.0 min, within 80% of the 60 min cache lifetime: followers go in a batch/);
    expect(summary.batchCache).toMatchObject({ expectedReads: 4, billedReads: 0, lost: true, routes: { anthropic: 'batch' }, rewarmCalls: 0 });
    const warning = notes.find((n) => n.startsWith('warning: the prompt cache was lost'));
    expect(warning).toMatch(/only 0 of 4 followers read the cache their leaders wrote \(the leaders' batch took 2 min, the followers' 80 min\)/);
    await store.close();
  });
});
