import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { makeSpecs, TEST_MANIFEST } from '../testing/fakes.js';
import { PgRunStore } from './pg-store.js';
import { postgresForTests, startTestCluster, type TestCluster } from './testing/cluster.js';

// Budget reservations on the shared PostgreSQL store when a lease changes hands: a lease
// lapses also when its holder is alive but could not renew it (a database outage, a loaded
// machine), and that holder's call may still be in flight and billed.

const bin = postgresForTests();
const LEASE_MS = 30_000;

describe.skipIf(bin === null)('shared work on PostgreSQL: reservations across a re-claim', () => {
  let cluster: TestCluster;
  let count = 0;
  beforeAll(async () => {
    cluster = await startTestCluster(bin!);
  }, 120_000);
  afterAll(() => cluster?.stop());

  async function setup(): Promise<{ store: PgRunStore; runId: string; keys: string[] }> {
    const store = await PgRunStore.connect(cluster.createDatabase(`shared_${++count}`));
    const runId = await store.createRun(TEST_MANIFEST, { id: 'budget' });
    const keys = await store.registerCells(runId, makeSpecs(3));
    return { store, runId, keys: [...new Set(keys)] };
  }

  const reservedOf = async (store: PgRunStore, runId: string) =>
    Number(
      (await store.client.query('SELECT coalesce(sum(lease_reserved_usd), 0) AS usd FROM cells WHERE lease_run = $1 AND lease_until > now()', [runId])).rows[0]!
        .usd,
    );
  const lapse = (store: PgRunStore, key: string) => store.client.query("UPDATE cells SET lease_until = now() - interval '1 second' WHERE key = $1", [key]);

  it("a cell claimed by another worker after its lease lapsed keeps the first worker's reservation; the budget counts both calls", async () => {
    const { store, runId, keys } = await setup();
    const [first, second] = [keys[0]!, keys[1]!];
    // Worker A claims one cell and reserves its worst case, $0.40 of a $1.00 budget.
    const a = await store.shared.claim('A', { max: 1, leaseMs: LEASE_MS, runId });
    expect(a.map((c) => c.key)).toEqual([first]);
    expect(await store.shared.reserve('A', first, runId, 0.4, 1)).toBe(true);
    // A's lease lapses while its call is in flight; worker B claims the cell.
    await lapse(store, first);
    const b = await store.shared.claim('B', { max: 1, leaseMs: LEASE_MS, runId });
    expect(b.map((c) => c.key)).toEqual([first]);
    // A's $0.40 is still reserved (the claim did not zero it), and B's own call adds to it.
    expect(await reservedOf(store, runId)).toBeCloseTo(0.4, 9);
    expect(await store.shared.reserve('B', first, runId, 0.4, 1)).toBe(true);
    expect(await reservedOf(store, runId)).toBeCloseTo(0.8, 9);
    // Two calls of $0.40 are under way: a third would pass the budget and is refused.
    const c = await store.shared.claim('C', { max: 1, leaseMs: LEASE_MS, runId });
    expect(c.map((cell) => cell.key)).toEqual([second]);
    expect(await store.shared.reserve('C', second, runId, 0.4, 1)).toBe(false);
    expect(await store.shared.reserve('C', second, runId, 0.2, 1)).toBe(true);
    // Writing the cell's result clears what it carried.
    await store.shared.recordMany([
      {
        key: first,
        runId,
        outcome: {
          status: 'done',
          attempts: 1,
          text: 'ok',
          reasoning: null,
          finishReason: 'stop',
          responseModel: 'fake',
          usage: { inputTokens: 10, outputTokens: 2, cachedInputTokens: 0, cacheWriteTokens: 0, reasoningTokens: 0 },
          latencyMs: 1,
          costUsd: 0.3,
          errorClass: null,
          errorMessage: null,
          startedAt: '2026-01-01T00:00:00.000Z',
          finishedAt: '2026-01-01T00:00:01.000Z',
        },
      },
    ]);
    expect(await reservedOf(store, runId)).toBeCloseTo(0.2, 9);
    expect(await store.shared.spentOf(runId)).toBeCloseTo(0.3, 9);
    await store.close();
  });

  it('a lapsed lease claimed back by its own worker keeps its reservation (the call is not made again)', async () => {
    const { store, runId, keys } = await setup();
    const [first, second] = [keys[0]!, keys[1]!];
    await store.shared.claim('A', { max: 1, leaseMs: LEASE_MS, runId });
    expect(await store.shared.reserve('A', first, runId, 0.7, 1)).toBe(true);
    await lapse(store, first);
    expect((await store.shared.claim('A', { max: 1, leaseMs: LEASE_MS, runId })).map((c) => c.key)).toEqual([first]);
    expect(await reservedOf(store, runId)).toBeCloseTo(0.7, 9);
    await store.shared.claim('B', { max: 1, leaseMs: LEASE_MS, runId });
    expect(await store.shared.reserve('B', second, runId, 0.5, 1)).toBe(false);
    // Given back, the cell's reservation ends with its lease.
    await store.shared.release('A', [first]);
    expect(await store.shared.reserve('B', second, runId, 0.5, 1)).toBe(true);
    await store.close();
  });
});
