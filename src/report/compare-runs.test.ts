import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ContinuationReport } from '../continuation/run.js';
import { findAudit } from '../experiment/registry.js';
import { analyzeAuditRun } from '../experiment/run-audit.js';
import type { MemoryReport } from '../memory-drift/analysis.js';
import type { GapEstimate, PersonaReport } from '../persona-drift/analysis.js';
import { openStore } from '../store/run-store.js';
import type { PairedDifference } from '../stats/paired-bootstrap.js';
import { compareAnalyzedRuns, differenceText } from './compare-runs.js';
import { continuationRuns, memoryRuns, personaRuns } from '../testing/audit-runs.js';

async function analyzed(db: string, id: string) {
  const store = openStore(db, { readonly: true });
  try {
    const run = await store.requireRun(id);
    return await analyzeAuditRun(findAudit(run.experiment)!, store, run);
  } finally {
    await store.close();
  }
}

const ok = (r: PairedDifference | { error: string }) => {
  if ('error' in r) throw new Error(r.error);
  return r;
};

describe('compareAnalyzedRuns', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-compare-runs-'));
  const dbs = { persona: join(dir, 'persona.db'), memory: join(dir, 'memory.db'), continuation: join(dir, 'continuation.db') };
  let persona: string[];
  let memory: string[];
  let continuation: string[];
  beforeAll(async () => {
    persona = await personaRuns(dbs.persona, ['sim:persona', 'sim:persona-null']);
    memory = await memoryRuns(dbs.memory, ['sim:memory', 'sim:memory-null']);
    continuation = await continuationRuns(dbs.continuation, ['sim:continuation', 'sim:continuation-null']);
  }, 240_000);

  it('persona: each side is its report’s drift gap; B − A over the shared positions, seeded', async () => {
    const a = await analyzed(dbs.persona, persona[0]!);
    const b = await analyzed(dbs.persona, persona[1]!);
    const result = compareAnalyzedRuns('persona', a, b, { B: 500 });
    expect(result.rows).toHaveLength(1);
    const row = result.rows[0]!;
    expect(row.subject).toBe('sim:persona · judge sim:judge ⇄ sim:persona-null · judge sim:judge');
    expect(row.unit).toBe('position');
    const d = ok(row.result);
    const gapA = (a.report as PersonaReport).drift[0]!.gap as GapEstimate;
    const gapB = (b.report as PersonaReport).drift[0]!.gap as GapEstimate;
    expect(d.a).toBeCloseTo(gapA.estimate, 12);
    expect(d.b).toBeCloseTo(gapB.estimate, 12);
    expect(d.clusters).toBe(gapA.units);
    // The planted drift is gone in the null profile: B − A is clearly negative.
    expect(d.ci[1]).toBeLessThan(0);
    expect(compareAnalyzedRuns('persona', a, b, { B: 500 })).toEqual(result);
    expect(differenceText(row).difference).toMatch(/^-\d\.\d\d \[-\d\.\d\d, -\d\.\d\d\]$/u);
  });

  it('when B lacks some of A’s units, shows each run’s estimate on the shared units and its own full estimate, labelled', async () => {
    const [fewer] = await personaRuns(dbs.persona, ['sim:persona-null'], 'three positions', [20, 35, 50]);
    const a = await analyzed(dbs.persona, persona[0]!);
    const b = await analyzed(dbs.persona, fewer!);
    const row = compareAnalyzedRuns('persona', a, b, { B: 500 }).rows[0]!;
    const d = ok(row.result);
    const driftA = (a.report as PersonaReport).drift[0]!;
    const gapA = driftA.gap as GapEstimate;
    const gapB = (b.report as PersonaReport).drift[0]!.gap as GapEstimate;
    expect(d.clusters).toBe(3);
    // Own = the run's report figure over all its positions; shared = A recomputed on B's three positions.
    expect(row.own.a).toBeCloseTo(gapA.estimate, 12);
    expect(row.own.b).toBeCloseTo(gapB.estimate, 12);
    const inB = new Set((b.report as PersonaReport).drift[0]!.byPosition.map((p) => `${p.session}|${p.position}`));
    const shared = driftA.byPosition.filter((p) => inB.has(`${p.session}|${p.position}`));
    expect(shared).toHaveLength(3);
    const sharedMean = shared.reduce((s, p) => s + (p.gap as GapEstimate).estimate, 0) / 3;
    expect(d.a).toBeCloseTo(sharedMean, 12);
    expect(Math.abs(d.a - gapA.estimate)).toBeGreaterThan(1e-6);
    const text = differenceText(row);
    const signed = (x: number) => `${x >= 0 ? '+' : ''}${x.toFixed(2)}`;
    expect(text.ownA).toBe(signed(gapA.estimate));
    expect(text.a).toBe(signed(d.a));
  });

  it('memory: each side is its report’s tier elevation; B − A over the shared questions', async () => {
    const a = await analyzed(dbs.memory, memory[0]!);
    const b = await analyzed(dbs.memory, memory[1]!);
    const result = compareAnalyzedRuns('memory', a, b, { B: 500 });
    const reportA = a.report as MemoryReport;
    const reportB = b.report as MemoryReport;
    const rows = result.rows.filter((r) => !('error' in r.result));
    expect(rows.length).toBeGreaterThanOrEqual(4);
    for (const row of rows) {
      const metric = row.statistic.startsWith('DTW') ? 'dtw' : 'sri';
      const tier = row.statistic.split(' · ')[1];
      const elevation = (report: MemoryReport) => {
        const e = report.targets[0]!.metrics[metric].tiers.find((t) => t.tier === tier)!.elevation;
        if ('error' in e) throw new Error(e.error);
        return e.estimate;
      };
      const d = ok(row.result);
      expect(d.a, row.statistic).toBeCloseTo(elevation(reportA), 10);
      expect(d.b, row.statistic).toBeCloseTo(elevation(reportB), 10);
      expect(row.unit).toBe('question');
      expect(d.clusters).toBe(15);
    }
    const life = ok(result.rows.find((r) => r.statistic === 'DTW elevation over the no-memory floor · life_event')!.result);
    // The null profile plants no life-event drift: B − A is negative (its interval is wide: the floor is near zero).
    expect(life.difference).toBeLessThan(0);
    expect(life.ci[0]).toBeLessThan(life.difference);
    expect(life.ci[1]).toBeGreaterThan(life.difference);
  });

  it('continuation: each side is its primary contrast; B − A over the shared cutpoints', async () => {
    const a = await analyzed(dbs.continuation, continuation[0]!);
    const b = await analyzed(dbs.continuation, continuation[1]!);
    const result = compareAnalyzedRuns('continuation', a, b, { B: 500 });
    expect(result.rows.map((r) => r.statistic)).toEqual([
      'argument fidelity recent − cross · complete case',
      'argument fidelity recent − cross · intention to treat',
    ]);
    const primary = (report: ContinuationReport) => report.analysis.targets[0]!.contrasts.find((c) => c.primary)!;
    const itt = ok(result.rows[1]!.result);
    expect(itt.a).toBeCloseTo(primary(a.report as ContinuationReport).itt.mean!, 12);
    expect(itt.b).toBeCloseTo(primary(b.report as ContinuationReport).itt.mean!, 12);
    expect(itt.units).toBe(primary(a.report as ContinuationReport).itt.n);
  });

  it('refuses runs of different audits', async () => {
    const a = await analyzed(dbs.persona, persona[0]!);
    const b = await analyzed(dbs.memory, memory[0]!);
    expect(() => compareAnalyzedRuns('persona', a, b)).toThrow(/is a persona run and .* a memory run; compare only runs of the same audit/u);
  });
});
