import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { openStore } from '../store/run-store.js';
import { analyzeContinuation, type ContinuationObservation, joinClusters } from './analysis.js';
import { continuationConfigSchema } from './config.js';
import { continuationReport, planAndPrime, readContinuationSessions, runContinuation } from './run.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

registerBuiltinSimProfiles();

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CODEX = join(packageRoot(), 'src', 'continuation', '__fixtures__', 'codex-ledger.jsonl');
const CODEX2 = join(packageRoot(), 'data', 'demo', 'codex-session.jsonl');

const tmp = useTempDir('echolens-donors-', 'test');

describe('several cross donors (crossSessions)', () => {
  it('cutpoints take the donors in turn; each cross window comes from its cutpoint’s donor', async () => {
    const cfg = continuationConfigSchema.parse({ session: DEMO, crossSessions: [CODEX, CODEX2], targets: ['sim:continuation'], cutpoints: { count: 8 } });
    const { session, cross, crosses } = await readContinuationSessions(cfg);
    expect(cross).toBeUndefined();
    expect(crosses.map((c) => c.file)).toEqual([CODEX, CODEX2]);
    const plan = planAndPrime(cfg, session, cross, null, crosses);
    expect(plan.cutpoints.map((c) => c.crossDonor)).toEqual(plan.cutpoints.map((_, i) => (i % 2 === 0 ? CODEX : CODEX2)));
    plan.arms.forEach((a, i) => {
      expect(a.arms.cross.notes).toContain(`cross window from ${i % 2 === 0 ? CODEX : CODEX2}`);
    });
    expect(plan.notes.some((n) => n.includes('2 donor transcripts taken in turn'))).toBe(true);
  });

  it('crossSession and crossSessions together are refused, naming the field; one donor in crossSessions is refused by the schema', async () => {
    const both = continuationConfigSchema.parse({ session: DEMO, crossSession: CODEX, crossSessions: [CODEX, CODEX2], targets: ['sim:continuation'] });
    await expect(readContinuationSessions(both)).rejects.toMatchObject({ field: 'crossSessions' });
    const one = continuationConfigSchema.safeParse({ session: DEMO, crossSessions: [CODEX], targets: ['sim:continuation'] });
    expect(one.success).toBe(false);
  });

  it('joinClusters: cutpoints sharing a key of either partition are one cluster', () => {
    const cuts = ['a', 'b', 'c', 'd', 'e', 'f'];
    const block = (c: string) => (['a', 'b'].includes(c) ? 'B1' : ['c', 'd'].includes(c) ? 'B2' : 'B3');
    const donor = (c: string) => (['b', 'c'].includes(c) ? 'D1' : c);
    const joined = joinClusters(cuts, block, donor);
    expect([...joined.values()]).toEqual(['a', 'a', 'a', 'a', 'e', 'e']);
    expect([...joinClusters(cuts, donor).values()]).toEqual(['a', 'b', 'b', 'd', 'e', 'f']);
  });

  it('the donor is a unit of the contrasts with the cross arm only', () => {
    const observations: ContinuationObservation[] = Array.from({ length: 12 }, (_, i) => i).flatMap((i) => {
      const base = { target: 'sim:t', cutpoint: `C${i}`, generated: true, status: 'call' as const, sameTask: true };
      return (['recent', 'cross', 'filler'] as const).map((arm) => ({ ...base, arm, fidelity: ((i * 7 + arm.length * 3) % 10) / 10 }));
    });
    const analysis = analyzeContinuation(observations, { seed: 1, crossDonorOf: (c) => `D${Number(c.slice(1)) % 3}` });
    const contrasts = analysis.targets[0]!.contrasts;
    const primary = contrasts.find((c) => c.primary)!;
    expect(primary.completeCase.clusters).toBe(3);
    const withoutCross = contrasts.find((c) => c.a !== 'cross' && c.b !== 'cross');
    expect(withoutCross).toBeDefined();
    expect(withoutCross!.completeCase.clusters).toBeUndefined();
    expect(withoutCross!.completeCase.n).toBe(12);
  });

  it('end to end: the report names the donors, clusters by donor and drops the one-donor warning', async () => {
    const db = join(tmp.path, 'run.db');
    const cfg = continuationConfigSchema.parse({
      session: DEMO,
      crossSessions: [CODEX, CODEX2],
      targets: ['sim:continuation'],
      cutpoints: { count: 8 },
      decoding: { seed: 1 },
    });
    const result = await runContinuation(cfg, db, { progress: false });
    const store = openStore(db, { readonly: true });
    const report = await continuationReport(store, result.runId, { resamples: 20_000 });
    await store.close();
    expect(report.crossSessions).toEqual([CODEX, CODEX2]);
    expect(report.crossSession).toBeNull();
    const target = report.analysis.targets[0]!;
    expect(target.warnings.some((w) => w.includes('one donor transcript'))).toBe(false);
    const primary = target.contrasts.find((c) => c.primary)!;
    expect(primary.itt.clusters).toBe(2);
    // Two donors: the test cannot reach 0.05, and no interval is claimed.
    expect(primary.itt.ci).toBeNull();
  });
});
