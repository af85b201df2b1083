import { describe, expect, it } from 'vitest';
import type { MemoryReport } from '../memory-drift/analysis.js';
import type { PersonaReport } from '../persona-drift/analysis.js';
import { registerBuiltinAudits } from '../audits.js';
import { registeredGateSchema, resolveRegisteredGate as resolveGate } from './registered.js';
import { isSimulatedRun } from './collect.js';
import { evaluateGate, type GateRunInput } from './evaluate.js';
import { renderGateMarkdown, renderJUnit } from './render.js';

// A test is an entry point: it registers the audits whose gates it checks.
registerBuiltinAudits();
const DEFAULT_GATE = resolveGate();

function gap(estimate: number, lo: number, hi: number) {
  const e = { estimate, ci: [lo, hi] as const };
  return { ...e, p: 0.01, nPositions: 4, real: e, filler: e, nReal: 10, nFiller: 10 };
}

function persona(drift: Array<{ target: string; gap: ReturnType<typeof gap> | { error: string } }>): PersonaReport {
  return {
    drift: drift.map((d) => ({ target: d.target, judge: 'sim:judge', gap: d.gap, strongDrift: false })),
  } as unknown as PersonaReport;
}

function memory(elevations: Record<string, { estimate: number; p: number } | { error: string }>): MemoryReport {
  const tiers = Object.entries(elevations).map(([tier, e]) => ({
    tier,
    elevation:
      'error' in e
        ? e
        : {
            estimate: e.estimate,
            ci: [e.estimate - 0.1, e.estimate + 0.1] as const,
            p: e.p,
            B: 1000,
            invalidReplicates: 0,
            nQuestions: 10,
            claim: { p: e.p, pRaw: e.p, interval: [e.estimate - 0.1, e.estimate + 0.1], confidence: 0.95, family: 1, alpha: 0.05, significant: e.p < 0.05 },
          },
  }));
  return { options: { alpha: 0.05 }, targets: [{ target: 'm', metrics: { dtw: { tiers } } }] } as unknown as MemoryReport;
}

const run = (over: Partial<GateRunInput>): GateRunInput => ({
  runId: 'r1',
  experiment: 'persona',
  simulated: false,
  cells: { total: 100, unfinished: 0 },
  ...over,
});

describe('evaluateGate', () => {
  it('fails a target whose drift CI lies above 0, passes one whose CI covers 0', () => {
    const result = evaluateGate(
      [
        run({
          report: persona([
            { target: 'a', gap: gap(0.4, 0.1, 0.7) },
            { target: 'b', gap: gap(0.05, -0.1, 0.2) },
          ]),
        }),
      ],
      DEFAULT_GATE,
    );
    expect(result.verdict).toBe('fail');
    const drift = result.checks.filter((c) => c.name === 'significant-drift');
    expect(drift.map((c) => [c.subject, c.status])).toEqual([
      ['a (judge sim:judge)', 'fail'],
      ['b (judge sim:judge)', 'pass'],
    ]);
  });

  it('applies max-drift and can ignore significance', () => {
    const report = persona([{ target: 'a', gap: gap(0.2, 0.05, 0.35) }]);
    expect(evaluateGate([run({ report: report })], resolveGate({ significantDrift: false })).verdict).toBe('pass');
    expect(evaluateGate([run({ report: report })], resolveGate({ significantDrift: false, maxDrift: 0.3 })).verdict).toBe('pass');
    const tight = evaluateGate([run({ report: report })], resolveGate({ significantDrift: false, maxDrift: 0.1 }));
    expect(tight.verdict).toBe('fail');
    expect(tight.checks.find((c) => c.name === 'max-drift')?.message).toMatch(/above the limit 0\.100/);
  });

  it('skips (never passes silently) a gap that could not be computed', () => {
    const result = evaluateGate([run({ report: persona([{ target: 'a', gap: { error: 'no filler arm' } }]) })], DEFAULT_GATE);
    expect(result.verdict).toBe('pass');
    expect(result.counts.skipped).toBe(1);
    expect(result.checks.find((c) => c.status === 'skipped')?.message).toMatch(/no filler arm/);
  });

  it('fails a significant persona or life-event elevation, not a noise one', () => {
    const result = evaluateGate(
      [
        run({
          experiment: 'memory',
          report: memory({ noise: { estimate: 0.5, p: 0.001 }, persona: { estimate: 0.3, p: 0.2 }, life_event: { estimate: 0.4, p: 0.01 } }),
        }),
      ],
      DEFAULT_GATE,
    );
    const statuses = result.checks.filter((c) => c.audit === 'memory').map((c) => [c.name, c.status]);
    expect(statuses).toEqual([
      ['significant-elevation:persona', 'pass'],
      ['significant-elevation:life_event', 'fail'],
    ]);
    const capped = evaluateGate(
      [run({ experiment: 'memory', report: memory({ persona: { estimate: 0.3, p: 0.2 } }) })],
      resolveGate({ significantElevation: false, maxElevation: 0.25 }),
    );
    expect(capped.checks.find((c) => c.name === 'max-elevation:persona')?.status).toBe('fail');
  });

  it('fails a run with too many failed or unfinished cells', () => {
    const result = evaluateGate([run({ cells: { total: 100, unfinished: 6 } })], DEFAULT_GATE);
    expect(result.verdict).toBe('fail');
    expect(evaluateGate([run({ cells: { total: 100, unfinished: 5 } })], DEFAULT_GATE).verdict).toBe('pass');
  });

  it('layers thresholds: later layers win key by key', () => {
    expect(resolveGate({ maxDrift: 0.3 }, undefined, { maxDrift: 0.2, significantDrift: false })).toEqual({
      ...DEFAULT_GATE,
      maxDrift: 0.2,
      significantDrift: false,
    });
    expect(registeredGateSchema().safeParse({ maxDrift: 0.3, typo: 1 }).success).toBe(false);
  });
});

describe('simulated runs', () => {
  it('are the runs with any sim: model', () => {
    expect(isSimulatedRun({ manifest: { config: { targets: ['openai:gpt-4.1'], judges: ['sim:judge'] } } as never })).toBe(true);
    expect(isSimulatedRun({ manifest: { config: { targets: ['openai:gpt-4.1'], labeler: 'anthropic:claude' } } as never })).toBe(false);
  });
});

describe('renderers', () => {
  const result = evaluateGate([run({ runId: 'r<1>', simulated: true, report: persona([{ target: 'a&b "x"', gap: gap(0.4, 0.1, 0.7) }]) })], DEFAULT_GATE);

  it('JUnit: one testcase per check, failures carry the message, text is escaped', () => {
    const xml = renderJUnit(result);
    expect(xml).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>\n<testsuites name="echolens gate" tests="2" failures="1" skipped="0"/);
    expect(xml).toContain('<testsuite name="r&lt;1&gt;"');
    expect(xml).toContain('classname="echolens.persona.a&amp;b &quot;x&quot; (judge sim:judge)" name="significant-drift"><failure message="Δ = +0.400');
    expect(xml).toContain('<property name="simulated" value="true"/>');
    expect((xml.match(/<testcase /g) ?? []).length).toBe(2);
    expect((xml.match(/<failure /g) ?? []).length).toBe(1);
  });

  it('Markdown: the verdict, a simulated banner and one row per check', () => {
    const md = renderGateMarkdown(result);
    expect(md).toMatch(/^## echolens gate: ❌ fail/);
    expect(md).toMatch(/Simulated models/);
    expect(md.split('\n').filter((l) => l.startsWith('| ✅') || l.startsWith('| ❌'))).toHaveLength(2);
    expect(md).not.toContain('&lt;');
  });
});
