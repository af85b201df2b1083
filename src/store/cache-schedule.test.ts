import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../models/types.js';
import { CacheScheduler, cachePolicyFor, type CachePolicy, MIN_CELLS_PER_LANE, promptCacheKeyOf } from './cache-schedule.js';
import { prefixSignature } from './schedule.js';

const long = (tag: string) => `${tag} `.repeat(2500);
const request = (model: string, prefix: string, question: string): ModelRequest => ({
  model,
  messages: [
    { role: 'user', content: prefix, cacheBreakpoint: true },
    { role: 'user', content: question },
  ],
  params: {},
  sample: 0,
});

/** A persona-like grid: `groups` prefixes × `probes` questions, in plan order (probe-major, as plans interleave). */
function grid(model: string, groups: number, probes: number, extraSingles = 0): ModelRequest[] {
  const requests: ModelRequest[] = [];
  for (let probe = 0; probe < probes; probe += 1) {
    for (let group = 0; group < groups; group += 1) requests.push(request(model, long(`g${group}`), `probe ${probe}`));
  }
  for (let single = 0; single < extraSingles; single += 1) requests.push(request(model, 'short', `single ${single}`));
  return requests;
}

interface Dispatch {
  position: number;
  at: number;
  role: string;
  cacheKey?: string;
}

/**
 * Discrete-event simulation: `concurrency` slots, every call takes `latency` ms of
 * virtual time; returns every dispatch and the finish time of each call.
 */
function simulate(
  requests: ModelRequest[],
  {
    concurrency,
    latency,
    policy,
    failLeaders = 0,
    mode,
  }: { concurrency: number; latency: number; policy: CachePolicy; failLeaders?: number; mode?: 'prefix' | 'prefix-fifo' },
) {
  let clock = 0;
  const scheduler = new CacheScheduler(requests, {
    ...(mode ? { mode } : {}),
    providerOf: (model) => model.split(':')[0]!,
    concurrencyOf: () => concurrency,
    policyOf: () => policy,
    now: () => clock,
  });
  const dispatches: Dispatch[] = [];
  const finishes = new Map<number, number>();
  const running: Array<{ position: number; end: number; ok: boolean }> = [];
  const busySlots: number[] = [];
  let failuresLeft = failLeaders;
  for (let guard = 0; guard < 1_000_000; guard += 1) {
    while (running.length < concurrency) {
      const step = scheduler.next(scheduler.providers[0]!);
      if (step === null) break;
      const ok = !(step.role === 'leader' && failuresLeft > 0);
      if (!ok) failuresLeft -= 1;
      dispatches.push({ position: step.position, at: clock, role: step.role, ...(step.cacheKey ? { cacheKey: step.cacheKey } : {}) });
      running.push({ position: step.position, end: clock + latency, ok });
    }
    if (running.length === 0) break;
    // Pacing never idles a slot: whenever cells remain, every slot is busy.
    if (scheduler.remaining > 0) busySlots.push(running.length);
    running.sort((a, b) => a.end - b.end);
    const done = running.shift()!;
    clock = done.end;
    finishes.set(done.position, clock);
    scheduler.finished(done.position, { ok: done.ok, latencyMs: latency });
  }
  return { dispatches, finishes, end: clock, scheduler, busySlots };
}

/** Longest wait of any follower since its group's cache was last written (leader's answer) or read (a follower sent). */
function gaps(requests: ModelRequest[], dispatches: Dispatch[], finishes: Map<number, number>) {
  const events: Array<{ at: number; signature: string; kind: 'write' | 'read' }> = [];
  for (const dispatch of dispatches) {
    const signature = prefixSignature(requests[dispatch.position]!);
    if (signature === null) continue;
    if (dispatch.role === 'leader') events.push({ at: finishes.get(dispatch.position)!, signature, kind: 'write' });
    else events.push({ at: dispatch.at, signature, kind: 'read' });
  }
  events.sort((a, b) => a.at - b.at || (a.kind === 'write' ? -1 : 1));
  const last = new Map<string, number>();
  let worst = 0;
  for (const event of events) {
    const previous = last.get(event.signature);
    if (event.kind === 'read') {
      expect(previous, 'a follower went out before its leader had answered').toBeDefined();
      worst = Math.max(worst, event.at - previous!);
    }
    last.set(event.signature, event.at);
  }
  return worst;
}

const MINUTE = 60_000;

describe('CacheScheduler', () => {
  it('keeps every follower of a paper-like grid inside the 5-minute TTL at 20 s latency (Anthropic)', () => {
    const requests = grid('anthropic:claude-sonnet-4-5', 24, 25);
    const policy = cachePolicyFor('anthropic');
    const { dispatches, finishes, end } = simulate(requests, { concurrency: 8, latency: 20_000, policy });
    expect(dispatches).toHaveLength(requests.length);
    expect(new Set(dispatches.map((d) => d.position)).size).toBe(requests.length);
    expect(dispatches.filter((d) => d.role === 'leader')).toHaveLength(24);
    expect(gaps(requests, dispatches, finishes)).toBeLessThan(policy.ttlMs);
    // Interleaving does not starve the slots: within 15 % of the ideal wall time.
    expect(end).toBeLessThan(1.15 * ((requests.length / 8) * 20_000 + 20_000));
    expect(dispatches.every((d) => d.cacheKey === undefined)).toBe(true);
  });

  it('a first-in-first-out follower queue (the old order) would break the TTL on the same grid', () => {
    // The check above can fail: the earlier order (kept as `prefix-fifo`) through it.
    const requests = grid('anthropic:x', 24, 25);
    const { dispatches, finishes } = simulate(requests, { concurrency: 8, latency: 20_000, policy: cachePolicyFor('anthropic'), mode: 'prefix-fifo' });
    expect(dispatches).toHaveLength(requests.length);
    expect(dispatches.filter((d) => d.role === 'leader')).toHaveLength(24);
    expect(gaps(requests, dispatches, finishes)).toBeGreaterThan(5 * MINUTE);
  });

  it('paces each OpenAI group to about 15 calls a minute, fills the slots with other groups, and sends one cache key per group', () => {
    const requests = grid('openai:gpt-4.1', 24, 25);
    const policy = cachePolicyFor('openai');
    const { dispatches, finishes, end } = simulate(requests, { concurrency: 8, latency: 20_000, policy });
    expect(dispatches).toHaveLength(requests.length);
    expect(gaps(requests, dispatches, finishes)).toBeLessThan(policy.ttlMs);
    const byKey = new Map<string, number[]>();
    for (const dispatch of dispatches) {
      expect(dispatch.cacheKey).toBe(promptCacheKeyOf(prefixSignature(requests[dispatch.position]!)!));
      byKey.set(dispatch.cacheKey!, [...(byKey.get(dispatch.cacheKey!) ?? []), dispatch.at]);
    }
    expect(byKey.size).toBe(24);
    // A key goes past its pace only when nothing else is left to send (the run's tail).
    let early = 0;
    dispatches.forEach((dispatch, order) => {
      const times = byKey.get(dispatch.cacheKey!)!;
      const at = times.indexOf(dispatch.at);
      const tooSoon = (at >= 1 && dispatch.at - times[at - 1]! < MINUTE / 15) || (at >= 15 && dispatch.at - times[at - 15]! < MINUTE);
      if (!tooSoon) return;
      early += 1;
      const others = dispatches.slice(order + 1).filter((later) => later.cacheKey !== dispatch.cacheKey);
      expect(
        others.every((later) => later.at > dispatch.at),
        'a paced key went early while other cells waited',
      ).toBe(true);
    });
    expect(early).toBeLessThan(20);
    expect(end).toBeLessThan(1.25 * ((requests.length / 8) * 20_000 + 20_000));
  });

  it('spreads a 980-cell labeler stage (one prefix) over cache lanes and keeps every slot busy', () => {
    // Every labeler call shares the static prefix: one group. At 15 a minute per key one lane would take an hour.
    const requests = grid('openai:gpt-4.1', 1, 980);
    const policy = cachePolicyFor('openai');
    for (const [concurrency, latency] of [
      [8, 2_000],
      [64, 200],
    ] as const) {
      const { dispatches, finishes, end, busySlots } = simulate(requests, { concurrency, latency, policy });
      expect(dispatches).toHaveLength(980);
      expect(new Set(dispatches.map((d) => d.position)).size).toBe(980);
      // Leaders run alone until the first lane is warm; after that no slot idles.
      expect(busySlots.slice(2).every((busy) => busy === concurrency)).toBe(true);
      expect(end).toBeLessThan(1.1 * ((980 / concurrency) * latency) + 2 * latency);
      const leaders = dispatches.filter((d) => d.role === 'leader');
      const keys = new Set(dispatches.map((d) => d.cacheKey));
      expect(leaders.length).toBe(keys.size);
      expect(keys.size).toBeGreaterThan(1);
      // Each lane's leader misses the cache: at most about 1 in MIN_CELLS_PER_LANE.
      expect(leaders.length).toBeLessThanOrEqual(Math.ceil(980 / MIN_CELLS_PER_LANE));
      // Every follower goes after its own lane's leader answered.
      const leaderEnd = new Map(leaders.map((d) => [d.cacheKey, finishes.get(d.position)!]));
      for (const d of dispatches) if (d.role === 'follower') expect(d.at).toBeGreaterThanOrEqual(leaderEnd.get(d.cacheKey)!);
      if (concurrency === 8) {
        // At 8 × 2 s the stage needs 240 calls a minute: 16 lanes at 15 a minute, and about that many are opened.
        expect(keys.size).toBeGreaterThanOrEqual(16);
        expect(keys.size).toBeLessThanOrEqual(24);
      }
    }
  });

  it('keeps a single-target OpenAI persona grid at concurrency 64 and 200 ms busy', () => {
    const requests = grid('openai:gpt-4.1', 24, 25);
    const { dispatches, end, busySlots } = simulate(requests, { concurrency: 64, latency: 200, policy: cachePolicyFor('openai') });
    expect(dispatches).toHaveLength(600);
    const ideal = (600 / 64) * 200;
    expect(end).toBeLessThan(1.3 * ideal + 2 * 200);
    expect(busySlots.filter((busy) => busy < 64).length).toBeLessThanOrEqual(3);
    expect(dispatches.filter((d) => d.role === 'leader').length).toBeLessThanOrEqual(48);
  });

  it('turns the cache key off when asked and keeps the 1-hour Anthropic TTL when chosen', () => {
    expect(cachePolicyFor('openai', { promptCacheKey: false }).sendCacheKey).toBe(false);
    expect(cachePolicyFor('anthropic', { cacheTtl: '1h' }).ttlMs).toBe(60 * MINUTE);
    expect(cachePolicyFor('anthropic').ttlMs).toBe(5 * MINUTE);
  });

  it('gives OpenAI the 24-hour lifetime under extended retention, and no other provider', () => {
    expect(cachePolicyFor('openai', { openaiCacheRetention: '24h' }).ttlMs).toBe(24 * 60 * MINUTE);
    expect(cachePolicyFor('openai', { openaiCacheRetention: 'in_memory' }).ttlMs).toBe(5 * MINUTE);
    expect(cachePolicyFor('openai').ttlMs).toBe(5 * MINUTE);
    expect(cachePolicyFor('anthropic', { openaiCacheRetention: '24h' }).ttlMs).toBe(5 * MINUTE);
    expect(cachePolicyFor('azure', { openaiCacheRetention: '24h' }).ttlMs).toBe(5 * MINUTE);
  });

  it('holds back new groups when latency is long, and still progresses when even one group exceeds the bound', () => {
    const requests = grid('anthropic:x', 6, 10);
    const policy = cachePolicyFor('anthropic');
    const slow = simulate(requests, { concurrency: 4, latency: 100_000, policy });
    expect(slow.dispatches).toHaveLength(requests.length);
    const fast = simulate(requests, { concurrency: 4, latency: 1_000, policy });
    expect(gaps(requests, fast.dispatches, fast.finishes)).toBeLessThan(policy.ttlMs);
  });

  it('re-warms a group whose leader failed with the next member, alone', () => {
    const requests = grid('anthropic:x', 3, 5);
    const { dispatches, finishes } = simulate(requests, { concurrency: 4, latency: 1_000, policy: cachePolicyFor('anthropic'), failLeaders: 1 });
    expect(dispatches).toHaveLength(requests.length);
    expect(dispatches.filter((d) => d.role === 'leader')).toHaveLength(4);
    expect(gaps(requests, dispatches, finishes)).toBeLessThan(5 * MINUTE);
  });

  it('runs short requests as single cells, and plan mode keeps plan order', () => {
    const requests = grid('anthropic:x', 2, 3, 3);
    const { dispatches } = simulate(requests, { concurrency: 2, latency: 1_000, policy: cachePolicyFor('anthropic') });
    expect(dispatches.filter((d) => d.role === 'single').map((d) => d.position)).toEqual([6, 7, 8]);
    let clock = 0;
    const plan = new CacheScheduler(requests, {
      mode: 'plan',
      providerOf: () => 'p',
      concurrencyOf: () => 1,
      policyOf: () => cachePolicyFor('anthropic'),
      now: () => clock++,
    });
    const order: number[] = [];
    for (let step = plan.next('p'); step !== null; step = plan.next('p')) order.push(step.position);
    expect(order).toEqual(requests.map((_, index) => index));
  });
});
