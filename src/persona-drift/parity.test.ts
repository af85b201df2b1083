import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { holm } from '../stats/multiple-testing.js';
import { SqliteRunStore } from '../store/run-store.js';
import type { PersonaReport } from './analysis.js';
import { readContextEchoArchive as readArchive, writeArchiveFiles } from './interchange-files.js';
import { exportRun, importArchive } from './interchange-store.js';
import { sectionsHtml } from '../report/document/render-html.js';
import { personaSections } from './document.js';
import { renderPersonaMarkdown } from './document.js';
import { personaReport } from './run.js';
import { PARITY_PER_CELL, writeParityArchive } from './testing/parity-archive.js';
import { expectIntervalNear } from '../stats/testing/interval.js';

/**
 * Replication parity: the synthetic archive of testing/parity-archive.ts (per-cell and
 * content-position layouts; missing cells, error rows, −1 scores, blank responses, unequal
 * positions, a single-position target) imported and reported under `procedure: reference`,
 * against the numbers the ContextEcho authors' own functions give on the same files
 * (__fixtures__/golden-parity.json; how it was produced: tools/golden/PARITY.md).
 * Point estimates to 1e-9; bootstrap interval ends and Monte Carlo p-values within Monte Carlo
 * error (their generators are numpy's and Python's, echolens's is its own).
 */

interface ArmGolden {
  mean: number;
  ci: [number, number];
  n: number;
  positions: number;
}
interface ComplianceGolden {
  pairs: number;
  real: number;
  filler: number;
  gapPp: number;
  rawRatio: number | null;
  rawPairs: number;
  conditionalRatio?: number;
  conditionalPairs: number;
}
interface Golden {
  targets: Record<
    string,
    {
      real: ArmGolden;
      filler: ArmGolden;
      gap: number;
      byCategory: Record<string, { real: number; filler: number; estimate: number; positions: { real: number; filler: number } }>;
      trajectory?: {
        real: number;
        filler: number;
        gap: number;
        positions: Array<{
          position: string;
          real: { mean: number; ci: [number, number]; n: number };
          filler: { mean: number; ci: [number, number]; n: number };
        }>;
      };
      headlinePermutation?: { mean: number; p: number; n: number };
    }
  >;
  headlineHolm: Record<string, number>;
  drifters: string[];
  categoryPanel: Record<string, number>;
  compliance: Record<string, ComplianceGolden>;
  compliancePooled: ComplianceGolden;
  anchorVariants: Record<string, Array<{ target: string; position: string; ratio_no_anchor: number; ratio_with_anchor: number; attenuation_pct: number }>>;
  fullTrajectoryV2: Array<{ target: string; position: string; ratio_no_anchor: number; ratio_v2: number; attenuation_pct: number }>;
  contentPosition: { rows: Array<{ target: string; condition: string; delta: number; p_raw: number; n: number; p_holm_within: number; p_holm_panel: number }> };
  holmCases: Array<{ p: number[]; holm: number[] }>;
}

const golden = JSON.parse(readFileSync(new URL('./__fixtures__/golden-parity.json', import.meta.url), 'utf8')) as Golden;
/** Monte Carlo tolerance of one p-value at 10,000 resamples (≥ 4 standard errors at p = 0.5, both generators). */
const P_TOL = 0.03;
/**
 * Interval ends of a 10,000-replicate percentile bootstrap. With 17–25 integer scores per arm the
 * replicate means sit on a grid of 1/n (0.04–0.06), so two generators can put a percentile one grid
 * step apart: the tolerance is one step and a half (measured: at most 0.050 on the arms, 0.048 on
 * the trajectory bands).
 */
const CI_TOL = 0.08;

let dir: string;
let report: PersonaReport;
let exported: Awaited<ReturnType<typeof exportRun>>;
let again: PersonaReport;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echolens-parity-'));
  writeParityArchive(join(dir, 'archive'));
  const store = SqliteRunStore.open(join(dir, 'store.db'));
  try {
    const { runId } = await importArchive(store, readArchive(join(dir, 'archive'), 'judge'), { source: join(dir, 'archive') });
    report = await personaReport(store, runId);
    exported = await exportRun(store, runId);
  } finally {
    await store.close();
  }
  writeArchiveFiles(join(dir, 'export'), exported.files);
  // The authors' files of the export only (echolens-run.json aside): their readers see these.
  const other = SqliteRunStore.open(join(dir, 'again.db'));
  try {
    const back = await importArchive(other, readArchive(join(dir, 'export'), 'judge'), { source: join(dir, 'export') });
    again = await personaReport(other, back.runId);
  } finally {
    await other.close();
  }
}, 120_000);

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe("replication parity with the ContextEcho authors' functions (procedure: reference)", () => {
  it('forest: arm means (mean of position means, −1 kept as in their figure) and gaps to 1e-9, intervals within Monte Carlo error', () => {
    const reference = report.reference;
    expect(reference?.minusOne).toBe('keep');
    for (const [target, g] of Object.entries(golden.targets)) {
      for (const [arm, want] of [
        ['real', g.real],
        ['filler', g.filler],
      ] as const) {
        const got = reference?.arms.find((a) => a.target === target && a.arm === arm);
        expect(got, `${target} ${arm}`).toBeDefined();
        expect(Math.abs((got?.mean as number) - want.mean)).toBeLessThan(1e-9);
        expect(got?.n).toBe(want.n);
        expect(got?.positions).toBe(want.positions);
        expectIntervalNear(got?.ci, want.ci, CI_TOL);
      }
      const gap = reference?.gap.find((x) => x.target === target);
      expect(Math.abs((gap?.estimate as number) - g.gap)).toBeLessThan(1e-9);
    }
    // The archive has the cases the estimators must handle.
    expect(PARITY_PER_CELL['tgt-c']?.positions).toHaveLength(1);
    expect(golden.targets['tgt-b']?.filler.positions).toBeLessThan(golden.targets['tgt-b']?.real.positions as number);
  });

  it('per-category Δ of every target (arms over different positions, a single-position target) and the drifters panel to 1e-9', () => {
    const reference = report.reference;
    let compared = 0;
    for (const [target, g] of Object.entries(golden.targets)) {
      for (const [category, want] of Object.entries(g.byCategory)) {
        const got = reference?.byCategory.find((c) => c.target === target && c.category === category);
        expect(got, `${target} ${category}`).toBeDefined();
        expect(Math.abs((got?.estimate as number) - want.estimate)).toBeLessThan(1e-9);
        expect(Math.abs((got?.real as number) - want.real)).toBeLessThan(1e-9);
        expect(Math.abs((got?.filler as number) - want.filler)).toBeLessThan(1e-9);
        expect(got?.positions).toEqual(want.positions);
        compared++;
      }
    }
    expect(compared).toBe(20);
    expect(reference?.byCategory).toHaveLength(20);
    for (const [category, estimate] of Object.entries(golden.categoryPanel)) {
      const got = reference?.categoryPanel.find((c) => c.category === category);
      expect(Math.abs((got?.estimate as number) - estimate)).toBeLessThan(1e-9);
      expect(got?.drifters).toEqual(golden.drifters);
    }
  });

  it('trajectory (all probes, blank responses skipped): position means to 1e-9, bands within Monte Carlo error', () => {
    for (const [target, g] of Object.entries(golden.targets)) {
      const got = report.reference?.trajectory.find((t) => t.target === target);
      if (!g.trajectory) {
        expect(got).toBeUndefined();
        continue;
      }
      expect(got?.positions.map((p) => p.position)).toEqual(g.trajectory.positions.map((p) => p.position));
      g.trajectory.positions.forEach((want, i) => {
        const p = got?.positions[i];
        for (const arm of ['real', 'filler'] as const) {
          expect(Math.abs((p?.[arm].mean as number) - want[arm].mean)).toBeLessThan(1e-9);
          expect(p?.[arm].n).toBe(want[arm].n);
          expectIntervalNear(p?.[arm].ci, want[arm].ci, CI_TOL);
        }
      });
      expect(Math.abs((got?.gap as number) - g.trajectory.gap)).toBeLessThan(1e-9);
    }
  });

  it('headline family: the filler − real permutation per target (mean to 1e-9, p within Monte Carlo error), Holm across targets', () => {
    const rows = report.reference?.permutation.filter((p) => p.contrast === 'filler - real') ?? [];
    expect(rows.map((r) => r.target).sort()).toEqual(Object.keys(golden.headlineHolm).sort());
    for (const row of rows) {
      const want = golden.targets[row.target]?.headlinePermutation;
      expect(Math.abs(row.mean - (want?.mean as number))).toBeLessThan(1e-9);
      expect(Math.abs(row.p - (want?.p as number))).toBeLessThan(P_TOL);
      expect(row.family).toBe('headline');
      expect(row.familySize).toBe(rows.length);
      expect(Math.abs(row.pHolm - (golden.headlineHolm[row.target] as number))).toBeLessThan(P_TOL * rows.length);
    }
    // Exactly Holm of the family's raw p-values.
    const adjusted = holm(rows.map((r) => r.p));
    rows.forEach((r, i) => {
      expect(r.pHolm).toBe(adjusted[i]);
    });
  });

  it('content-position contrasts: Δ to 1e-9, p within Monte Carlo error, Holm within target and across the panel as their consolidation', () => {
    const rows = report.reference?.permutation.filter((p) => p.contrast.endsWith(' - scratch')) ?? [];
    expect(rows).toHaveLength(golden.contentPosition.rows.length);
    for (const want of golden.contentPosition.rows) {
      const got = rows.find((r) => r.target === want.target && r.contrast === `${want.condition} - scratch`);
      expect(got, `${want.target} ${want.condition}`).toBeDefined();
      expect(Math.abs((got?.mean as number) - want.delta)).toBeLessThan(1e-9);
      expect(Math.abs((got?.p as number) - want.p_raw)).toBeLessThan(P_TOL);
      expect(got?.family).toBe('content-position-panel');
      expect(got?.familySize).toBe(8);
      expect(Math.abs((got?.pHolm as number) - want.p_holm_panel)).toBeLessThan(P_TOL * 8);
      expect(Math.abs((got?.pHolmWithinTarget as number) - want.p_holm_within)).toBeLessThan(P_TOL * 4);
    }
  });

  it('calibrated procedure: the same content-position contrasts (probes as units), Holm across the panel and within target', () => {
    const rows = report.contentPosition ?? [];
    expect(rows).toHaveLength(8);
    const p = rows.map((r) => ('error' in r.difference ? Number.NaN : r.difference.p));
    const panel = holm(p);
    rows.forEach((r, i) => {
      expect(r.family).toBe('content-position-panel');
      expect(r.familySize).toBe(8);
      expect(r.pHolm).toBe(panel[i]);
      const want = golden.contentPosition.rows.find((g) => g.target === r.target && `${g.condition} - scratch` === r.contrast);
      // The same paired probe differences as their consolidation: the same Δ.
      expect(Math.abs(('error' in r.difference ? Number.NaN : r.difference.estimate) - (want?.delta as number))).toBeLessThan(1e-9);
    });
    for (const target of ['tgt-a', 'tgt-e']) {
      const mine = rows.filter((r) => r.target === target);
      const within = holm(mine.map((r) => ('error' in r.difference ? Number.NaN : r.difference.p)));
      mine.forEach((r, i) => {
        expect(r.pHolmWithinTarget).toBe(within[i]);
      });
    }
  });

  it("export writes exactly the files the authors' readers expect: a content-position file for each target with scratch (also beside per-cell cells), none for the others", () => {
    const docs = exported.files.filter((f) => f.path.startsWith('docs/')).map((f) => f.path);
    expect(docs.sort()).toEqual(['docs/CONTENT_POSITION_tgt-a.json', 'docs/CONTENT_POSITION_tgt-e.json']);
    const tgtA = exported.files.find((f) => f.path === 'docs/CONTENT_POSITION_tgt-a.json')?.value as { full_results: Record<string, { results: unknown[] }> };
    expect(Object.keys(tgtA.full_results).sort()).toEqual(['filler14K', 'recent3K', 'recent3K_earlier', 'recent3K_filler', 'scratch']);
    expect(tgtA.full_results.scratch?.results).toHaveLength(25);
    // Every imported cell is in the per-cell tree, error cells included.
    expect(exported.files.filter((f) => f.path.startsWith('results/probes_at_crosscompaction/'))).toHaveLength(559 + 250);
    expect(exported.files.filter((f) => f.path.startsWith('results/cross_compaction/'))).toHaveLength(98);
    expect(exported.files.filter((f) => f.path.startsWith('results/anchor_variants/'))).toHaveLength(50);
  });

  it('import(export(archive)) gives the same reference numbers', () => {
    const a = report.reference;
    const b = again.reference;
    expect(b?.arms.map((x) => [x.target, x.arm, x.mean, x.n])).toEqual(a?.arms.map((x) => [x.target, x.arm, x.mean, x.n]));
    expect(b?.byCategory).toEqual(a?.byCategory);
    expect(b?.categoryPanel).toEqual(a?.categoryPanel);
    expect(b?.permutation).toEqual(a?.permutation);
    expect(b?.trajectory.map((t) => [t.target, t.gap])).toEqual(a?.trajectory.map((t) => [t.target, t.gap]));
  });

  it('cross-compaction: their S2 compliance audit per target and pooled (rates, gap, raw and conditional length ratios) to 1e-9', () => {
    const rows = report.reference?.compliance ?? [];
    const check = (got: (typeof rows)[number] | undefined, want: ComplianceGolden) => {
      expect(got?.pairs).toBe(want.pairs);
      expect(got?.real.pass).toBe(want.real);
      expect(got?.filler.pass).toBe(want.filler);
      expect(Math.abs((got?.gapPp as number) - want.gapPp)).toBeLessThan(1e-9);
      expect(Math.abs((got?.rawRatio as number) - (want.rawRatio as number))).toBeLessThan(1e-9);
      expect(got?.rawPairs).toBe(want.rawPairs);
      expect(got?.conditionalPairs).toBe(want.conditionalPairs);
      expect(Math.abs((got?.conditionalRatio as number) - (want.conditionalRatio as number))).toBeLessThan(1e-9);
    };
    for (const [target, want] of Object.entries(golden.compliance))
      check(
        rows.find((r) => r.target === target),
        want,
      );
    check(
      rows.find((r) => r.session === 'S1'),
      golden.compliancePooled,
    );
    expect(rows).toHaveLength(3);
  });

  it('anchor variants and the V2 full trajectory: ratios and attenuation per target × position to 1e-9, their minimum of 3 anchored cells', () => {
    const rows = report.reference?.anchorVariants ?? [];
    let compared = 0;
    for (const [variant, wants] of Object.entries(golden.anchorVariants)) {
      expect(rows.filter((r) => r.variant === variant)).toHaveLength(wants.length);
      for (const want of wants) {
        const got = rows.find((r) => r.variant === variant && r.target === want.target && r.position === want.position);
        expect(Math.abs((got?.ratioNoAnchor as number) - want.ratio_no_anchor)).toBeLessThan(1e-9);
        expect(Math.abs((got?.ratioWithAnchor as number) - want.ratio_with_anchor)).toBeLessThan(1e-9);
        expect(Math.abs((got?.attenuationPct as number) - want.attenuation_pct)).toBeLessThan(1e-9);
        compared++;
      }
    }
    expect(compared).toBe(7);
    for (const want of golden.fullTrajectoryV2) {
      const got = rows.find((r) => r.variant === 'V2_IN_CONTEXT' && r.target === want.target && r.position === want.position);
      expect(Math.abs((got?.ratioWithAnchor as number) - want.ratio_v2)).toBeLessThan(1e-9);
      expect(Math.abs((got?.attenuationPct as number) - want.attenuation_pct)).toBeLessThan(1e-9);
    }
    const v2 = report.reference?.anchorVariantSummary.find((s) => s.variant === 'V2_IN_CONTEXT');
    const attn = golden.fullTrajectoryV2.map((r) => r.attenuation_pct);
    expect(Math.abs((v2?.meanAttenuationPct as number) - attn.reduce((a, b) => a + b, 0) / attn.length)).toBeLessThan(1e-9);
    expect(v2?.wins).toBe(attn.filter((a) => a >= 50).length);
    expect(v2?.failures).toBe(attn.filter((a) => a < 0).length);
  });

  it("the Markdown report shows the paper's tables with the family of every adjusted p", async () => {
    const md = renderPersonaMarkdown(report);
    expect(md).toContain('Holm across the panel (content-position family, 8 tests)');
    expect(md).toContain('Holm across targets (headline family, 4 tests)');
    expect(md).toContain('S2 compliance audit (paper');
    expect(md).toContain('| V2_IN_CONTEXT | tgt-b | P5_pre_C6 |');
    expect(md).toContain('Δ per probe category (paper');
    expect(md).toContain('## Content-position contrasts (calibrated)');
    const page = String(await sectionsHtml(personaSections(report)));
    expect(page).toContain('S2 compliance audit (paper');
    expect(page).toContain('V2_IN_CONTEXT');
    expect(page).toContain('Holm across the panel (content-position family, 8 tests)');
  });

  it('the cross-compaction folder given on its own is read as that layout (not as <target>/<position>/<arm>)', () => {
    const read = readArchive(join(dir, 'archive', 'results', 'cross_compaction'), 'judge');
    expect(read.layouts).toEqual({ perCell: 0, contentPosition: 0, crossCompaction: 98 });
    expect(new Set(read.cells.map((c) => `${c.surface}:${c.item}`))).toEqual(new Set(['stressor:S2']));
    expect(read.cells.filter((c) => c.arm === 'filler')).toHaveLength(50);
  });

  it("their holm() and echolens's agree exactly on fixed p-value lists (ties, zeros, ones)", () => {
    for (const c of golden.holmCases) {
      const ours = holm(c.p);
      c.holm.forEach((want, i) => {
        expect(Math.abs((ours[i] as number) - want)).toBeLessThan(1e-12);
      });
    }
  });

  it('error files and rows are failed cells, counted per arm, and the import keeps every other cell', () => {
    const failed = report.counts.byArm.reduce((sum, a) => sum + a.failed, 0);
    // 11 `{ probe_id, error }` per-cell files and 18 error rows in the content-position files.
    expect(failed).toBe(11 + 18);
    const done = report.counts.byArm.reduce((sum, a) => sum + a.done + a.empty, 0);
    // 559 per-cell files, 2 files × 5 conditions × 25 probes, 98 cross-compaction and 50 anchor-variant files.
    expect(done + failed).toBe(559 + 250 + 98 + 50);
    expect(report.reference?.notComputed).toEqual([]);
  });
});
