import { describe, expect, it } from 'vitest';
import { analyzePersona, type GapEstimate, type PersonaObservation } from './analysis.js';
import { renderPersonaMarkdown } from './document.js';
import { personaObservation } from './testing/observation.js';

const obs = personaObservation;

/** Real arm scores 2 at every cell, filler 3: Δ = +1 exactly. */
function plantedGrid(positions = 4, items = 3): PersonaObservation[] {
  const out: PersonaObservation[] = [];
  for (let p = 0; p < positions; p++) {
    for (const item of Array.from({ length: items }, (_, i) => `C${String(i + 1).padStart(2, '0')}`)) {
      for (let sample = 0; sample < 3; sample++) {
        const base = { position: `P0${p}`, positionValue: p * 100, item, sample };
        out.push(obs({ ...base, arm: 'real', scores: { 'sim:judge': sample === 0 ? 1 : 2.5 } }));
        out.push(obs({ ...base, arm: 'filler', scores: { 'sim:judge': 3 } }));
      }
    }
  }
  return out;
}

describe('analyzePersona', () => {
  it('calls a gap of exactly 0 at every unit (arms scored alike everywhere) not computable, never a pass with an MDE of 0', () => {
    const same = plantedGrid(8).map((o) => ({ ...o, scores: { 'sim:judge': 3 } }));
    const d = analyzePersona(same, { B: 500 }).drift[0]!;
    expect((d.gap as GapEstimate).estimate).toBe(0);
    expect((d.gap as GapEstimate).se).toBe(0);
    expect(d.verdict.kind).toBe('not computable');
    expect(d.verdict.mde).toBeNull();
    expect(d.verdict.text).toMatch(/^not computable: all 8 units have a gap of exactly 0 \(zero variance\)/u);
    expect(d.verdict.text).not.toMatch(/would be detected/u);
    // A planted gap identical at every unit is not that case: it is tested as before.
    expect(
      analyzePersona(
        plantedGrid(8).map((o) => ({ ...o, scores: { 'sim:judge': o.arm === 'real' ? 2 : 3 } })),
        { B: 500 },
      ).drift[0]!.verdict.kind,
    ).toBe('drift');
  });

  it('recovers a planted gap, flags strong drift and tests it', () => {
    const report = analyzePersona(plantedGrid(), { B: 2000 });
    expect(report.drift).toHaveLength(1);
    const d = report.drift[0]!;
    const gap = d.gap as GapEstimate;
    // real mean = (1 + 2.5 + 2.5)/3 = 2, filler = 3.
    expect(gap.estimate).toBeCloseTo(1, 12);
    // Four positions cannot reach p < 0.05 by sign flips (the inverted set is the whole line):
    // the interval shown is the t interval widened to contain 0, so it agrees with p = 0.125.
    expect(gap.ciMethod).toBe('t ∪ 0');
    expect(gap.ci[0]).toBe(0);
    expect(gap.ci[1]).toBeGreaterThanOrEqual(1);
    expect(d.strongDrift).toBe(true);
    expect('error' in d.signFlip).toBe(false);
    // Four positions are the units: the exact sign-flip cannot go below 2/2^4.
    expect((d.signFlip as { p: number }).p).toBeCloseTo(0.125, 12);
    expect(gap.level).toBe('position');
    expect(gap.units).toBe(4);
    expect(d.verdict.kind).toBe('underpowered for this design');
    expect(d.byPosition).toHaveLength(4);
    expect(d.onset).toBeNull();
  });

  it('calls drift with enough positions and finds the onset', () => {
    const d = analyzePersona(plantedGrid(8), { B: 2000 }).drift[0]!;
    expect((d.signFlip as { p: number }).p).toBeCloseTo(2 / 256, 12);
    expect(d.verdict.kind).toBe('drift');
    expect(d.verdict.cell).toContain('prompt=default');
    expect(d.verdict.cell).toContain('distance=d0');
    // Three probes per position cannot show drift at one position (smallest p 2/2^3).
    expect(d.onset).toBeNull();
    // Ten probes can: 2/2^10 per position, Holm over 8 positions.
    const ten = analyzePersona(plantedGrid(8, 10), { B: 2000 }).drift[0]!;
    expect(ten.onset?.position).toBe('P00');
  });

  it('reports no drift and no strong flag when both arms score alike', () => {
    const flat = plantedGrid().map((o) => ({ ...o, scores: { 'sim:judge': o.sample === 1 ? 2 : 3 } }));
    const d = analyzePersona(flat, { B: 1000 }).drift[0]!;
    expect((d.gap as GapEstimate).estimate).toBeCloseTo(0, 12);
    expect(d.strongDrift).toBe(false);
    expect(d.onset).toBeNull();
  });

  it('excludes invalid judgements from means and counts them per arm', () => {
    const grid = plantedGrid();
    grid[0] = { ...grid[0]!, scores: { 'sim:judge': null } };
    const report = analyzePersona(grid, { B: 500 });
    const realRow = report.counts.invalidJudgements.find((r) => r.arm === 'real');
    expect(realRow).toMatchObject({ invalid: 1, judged: 36 });
    expect((report.drift[0]!.gap as GapEstimate).nReal).toBe(35);
  });

  it('counts dropouts per arm', () => {
    const grid = plantedGrid();
    grid.push(obs({ arm: 'real', status: 'empty', text: '', scores: {} }));
    const row = analyzePersona(grid, { B: 200 }).counts.byArm.find((r) => r.arm === 'real');
    expect(row).toMatchObject({ empty: 1, done: 36 });
    expect(row?.dropoutRate).toBeCloseTo(1 / 37, 12);
  });

  it('computes mitigation contrasts and score recovery', () => {
    const grid = plantedGrid();
    for (const o of grid.filter((x) => x.arm === 'real')) {
      grid.push({ ...o, mitigation: 'a-anchor', scores: { 'sim:judge': 3 } });
      grid.push({ ...o, mitigation: 'placebo_iso_recipe', scores: { 'sim:judge': 2.5 } });
    }
    const report = analyzePersona(grid, { B: 500 });
    const anchor = report.mitigations.find((m) => m.mitigation === 'a-anchor')!;
    expect(anchor.mean).toBe(3);
    expect((anchor.vsControl as GapEstimate).estimate).toBeCloseTo(1, 12);
    expect((anchor.vsPlacebo as GapEstimate).estimate).toBeCloseTo(0.5, 12);
    expect(anchor.recovery).toBeCloseTo(1, 12);
    const placebo = report.mitigations.find((m) => m.mitigation === 'placebo_iso_recipe')!;
    expect(placebo.recovery).toBeCloseTo(0.5, 12);
    expect(placebo.vsPlacebo).toBeNull();
  });

  it('computes stressor compliance gaps and verbosity ratios (paired by position, paraphrase, sample)', () => {
    const grid: PersonaObservation[] = [];
    for (let p = 0; p < 3; p++) {
      for (let k = 0; k < 4; k++) {
        const base = { surface: 'stressor' as const, item: 'S2', category: 'S2', position: `P${p}`, paraphrase: k, scores: {} };
        grid.push(obs({ ...base, session: p < 2 ? 's1' : 's2', arm: 'filler', text: 'npm test', check: { pass: true, reason: 'ok' } }));
        const broken = k === 0;
        grid.push(
          obs({
            ...base,
            session: p < 2 ? 's1' : 's2',
            arm: 'real',
            text: broken ? 'Sure! Here is the command:\n```\nnpm test\n```' : 'npm test -- --watch',
            check: broken ? { pass: false, reason: 'fenced' } : { pass: true, reason: 'ok' },
          }),
        );
      }
    }
    const report = analyzePersona(grid, { B: 200 });
    const v = report.verbosity[0]!;
    expect(v.pairs).toBe(12);
    expect(v.complianceGapPp).toBeCloseTo(25, 9);
    expect(v.medianRatio).toBeCloseTo('npm test -- --watch'.length / 'npm test'.length, 12);
    expect(v.conditionalRatio).toBeCloseTo('npm test -- --watch'.length / 'npm test'.length, 12);
    expect(v.conditionalPairs).toBe(9);
    const realRow = report.stressors.find((s) => s.arm === 'real')!;
    expect(realRow.complianceRate).toBeCloseTo(0.75, 12);
  });

  it('compares contract pass rates with sessions as the units and Holm', () => {
    const grid: PersonaObservation[] = [];
    for (let s = 0; s < 8; s++) {
      for (let k = 0; k < 4; k++) {
        const base = { surface: 'contract' as const, item: 'C2_yaml', category: 'C2_yaml', session: `s${s}`, sample: k, scores: {} };
        grid.push(obs({ ...base, mitigation: 'none', check: k < 2 + (s % 2) ? { pass: true, reason: 'ok' } : { pass: false, reason: 'fenced' } }));
        grid.push(obs({ ...base, mitigation: 'a-anchor', check: { pass: true, reason: 'ok' } }));
      }
    }
    const report = analyzePersona(grid, { B: 500 });
    const contrast = report.contractContrasts.find((c) => c.contrast === 'a-anchor - none')!;
    expect(contrast.sessions).toBe(8);
    const diff = contrast.difference as { estimate: number };
    expect(diff.estimate).toBeCloseTo((0.5 * 4 + 0.25 * 4) / 8, 12);
    expect((contrast.signFlip as { p: number; level: string }).level).toBe('session');
    // Every session favours the anchor: exact sign-flip p = 2/2^8.
    expect((contrast.signFlip as { p: number }).p).toBeCloseTo(2 / 256, 12);
    expect(contrast.pHolm).not.toBeNull();
    const control = report.contracts.find((c) => c.mitigation === 'none')!;
    expect(control.failures.fenced).toBe(12);
  });

  it('computes post − pre change per compaction event and a TOST', () => {
    const grid: PersonaObservation[] = [];
    for (let event = 0; event < 6; event++) {
      for (const side of ['pre', 'post'] as const) {
        for (const item of ['C01', 'C02']) {
          const shift = side === 'post' ? (event % 2 === 0 ? 0.01 : -0.01) : 0;
          const base = { position: `${side}-C${event}`, positionValue: event * 1000 + (side === 'post' ? 100 : -1), item, compaction: { index: event, side } };
          grid.push(obs({ ...base, arm: 'real', scores: { 'sim:judge': 2 - shift } }));
          grid.push(obs({ ...base, arm: 'filler', scores: { 'sim:judge': 2.5 } }));
        }
      }
    }
    const report = analyzePersona(grid, { B: 200 });
    const c = report.compaction[0]!;
    expect(c.events).toHaveLength(6);
    expect(c.meanChange).toBeCloseTo(0, 9);
    expect(c.tost).not.toBeNull();
    expect((c.tost as { equivalent: boolean }).equivalent).toBe(true);
  });

  it('reports cross-judge agreement and sign classes', () => {
    const grid = plantedGrid().map((o) => {
      const a = Math.round(o.scores['sim:judge'] as number);
      return { ...o, scores: { 'sim:judge': a, 'sim:judge2': a === 3 ? 3 : 2 } };
    });
    const report = analyzePersona(grid, { B: 200 });
    expect(report.judgeAgreement).toHaveLength(1);
    const a = report.judgeAgreement[0]!;
    expect('error' in a.pairs).toBe(false);
    const pairs = a.pairs as { n: number; exact: number };
    expect(pairs.n).toBe(72);
    // judge2 differs only on the real arm's sample-0 cells scored 1 (12 of 72 cells).
    expect(pairs.exact).toBeCloseTo(60 / 72, 12);
    expect((a.signs as { agree: number }).agree).toBe(1);
  });

  it('renders every section to Markdown with escaped cells', () => {
    const grid = plantedGrid().map((o) => ({ ...o, target: 'sim:a|b' }));
    const md = renderPersonaMarkdown(analyzePersona(grid, { B: 200 }));
    expect(md).toContain('## Drift per target');
    expect(md).toContain('sim:a\\|b');
    expect(md).toMatch(/\+1\.00 \[/);
  });

  it('renders Markdown tables whose rows have as many cells as their header', () => {
    const stressors: PersonaObservation[] = [];
    for (let p = 0; p < 4; p++) {
      for (const arm of ['real', 'filler']) {
        stressors.push(
          obs({
            position: `P0${p}`,
            positionValue: p * 100,
            arm,
            surface: 'stressor',
            item: 'S2',
            category: 'stressor',
            scores: {},
            text: 'x'.repeat(arm === 'real' ? 80 : 40),
            check: { pass: true, reason: 'ok' },
          }),
        );
      }
    }
    const md = renderPersonaMarkdown(analyzePersona([...plantedGrid(), ...stressors], { B: 200 }));
    // A cell count: pipes that are not escaped, minus the two borders.
    const cells = (line: string) => line.replace(/\\\|/gu, '').split('|').length - 2;
    const lines = md.split('\n');
    let tables = 0;
    for (let i = 0; i + 1 < lines.length; i++) {
      if (!/^\| ---/u.test(lines[i + 1] ?? '')) continue;
      tables += 1;
      const width = cells(lines[i] ?? '');
      for (let j = i + 1; j < lines.length && (lines[j] ?? '').startsWith('|'); j++) expect(cells(lines[j] ?? ''), lines[j]).toBe(width);
    }
    expect(tables).toBeGreaterThan(3);
    expect(md).toContain('ratio when both comply');
  });

  it('gives a named error, not a number, for designs the analysis cannot support', () => {
    const noFiller = plantedGrid(8).filter((o) => o.arm === 'real');
    const d = analyzePersona(noFiller, { B: 200 }).drift[0]!;
    expect((d.gap as { error: string }).error).toMatch(/add "filler" to arms/);
    expect(d.verdict.kind).toBe('not computable');
    const onePosition = plantedGrid(1);
    expect((analyzePersona(onePosition, { B: 200 }).drift[0]!.gap as { error: string }).error).toMatch(/at least 2 positions/);
    const noControl = plantedGrid(8).flatMap((o) => (o.arm === 'real' ? [{ ...o, mitigation: 'a-anchor' }] : [o]));
    const m = analyzePersona(noControl, { B: 200 }).mitigations[0]!;
    expect((m.vsControl as { error: string }).error).toMatch(/add "none" to mitigations/);
  });

  it('makes sessions the units when there are several, and says when they are too few', () => {
    const grid = [0, 1, 2].flatMap((s) => plantedGrid(4).map((o) => ({ ...o, session: `s${s}` })));
    const d = analyzePersona(grid, { B: 200 }).drift[0]!;
    const gap = d.gap as GapEstimate;
    expect(gap.level).toBe('session');
    expect(gap.units).toBe(3);
    expect(gap.positions).toBe(12);
    expect(gap.p).toBeCloseTo(0.25, 12);
    expect(gap.note).toMatch(/at least 6 sessions/);
    expect(d.verdict.kind).toBe('underpowered for this design');
  });

  it('keeps system prompts and distances apart: the headline is the first of each, the rest are named contrasts', () => {
    const grid = plantedGrid(8).flatMap((o) => [
      { ...o, systemPrompt: 'probe-reference' },
      // Under a second prompt the filler arm is unchanged and the real arm matches it: no drift there.
      { ...o, systemPrompt: 'format-strict', scores: { 'sim:judge': 3 } },
      ...(o.arm === 'real' ? [{ ...o, systemPrompt: 'probe-reference', distance: 'far', scores: { 'sim:judge': 2.5 } }] : []),
    ]);
    const report = analyzePersona(grid, { B: 200, systemPrompts: ['probe-reference', 'format-strict'], distances: ['d0', 'far'] });
    expect((report.drift[0]!.gap as GapEstimate).estimate).toBeCloseTo(1, 12);
    expect(report.drift[0]!.cell).toContain('prompt=probe-reference');
    const other = report.contrasts.find((c) => c.kind === 'drift')!;
    expect(other.name).toContain('prompt=format-strict');
    expect((other.result as GapEstimate).estimate).toBeCloseTo(0, 12);
    const prompt = report.contrasts.find((c) => c.kind === 'prompt')!;
    expect((prompt.result as GapEstimate).estimate).toBeCloseTo(-1, 12);
    const distance = report.contrasts.find((c) => c.kind === 'distance')!;
    expect((distance.result as GapEstimate).estimate).toBeCloseTo(0.5, 12);
  });

  it('analyses the scratch arm once per target over its distinct answers', () => {
    const grid = plantedGrid(8);
    for (const o of grid.filter((x) => x.arm === 'real')) grid.push({ ...o, arm: 'scratch', scores: { 'sim:judge': o.sample === 0 ? 3 : 2 } });
    const report = analyzePersona(grid, { B: 200 });
    expect(report.scratch).toHaveLength(1);
    // 3 probes × 3 samples, whatever the number of positions.
    expect(report.scratch[0]!.answers).toBe(9);
    expect(report.drift[0]!.referenceArms.map((r) => r.arm)).not.toContain('scratch');
  });
});
