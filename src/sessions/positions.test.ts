import { describe, expect, it } from 'vitest';
import { readMainSessions } from './testing/fixtures.js';
import { compactionPositions, decilePositions, explicitPositions, ONSET_STEPS, parsePositionSpec, resolvePosition, uniformPositions } from './positions.js';

const { claude, codex } = await readMainSessions();

describe('positions on named counters', () => {
  it('resolves a value to the first message reaching it; a value inside a merged message takes the whole message', () => {
    expect(resolvePosition(claude, 'agentSteps', 5)).toMatchObject({ end: 5, reached: 7, segment: 0 });
    expect(resolvePosition(claude, 'agentSteps', 7)).toMatchObject({ end: 5, reached: 7 });
    expect(resolvePosition(claude, 'userTurns', 3)).toMatchObject({ end: 19, reached: 3, segment: 1 });
    expect(resolvePosition(claude, 'messages', 26)).toMatchObject({ end: 26 });
    expect(resolvePosition(claude, 'assistantMessages', 1)).toMatchObject({ end: 5 });
  });

  it('beyond the session: error by default, clip or drop with a warning', () => {
    expect(() => resolvePosition(claude, 'agentSteps', 25)).toThrow(/beyond the session \(agentSteps total 24\)/);
    const warnings: string[] = [];
    expect(resolvePosition(claude, 'agentSteps', 99, { beyond: 'clip', warnings })).toMatchObject({ end: 26, clipped: true, value: 99, reached: 24 });
    expect(resolvePosition(claude, 'agentSteps', 99, { beyond: 'drop', warnings })).toBeUndefined();
    expect(warnings).toHaveLength(2);
    expect(() => resolvePosition(claude, 'agentSteps', 0)).toThrow(/integers ≥ 1/);
    expect(() => resolvePosition(claude, 'steps' as never, 1)).toThrow(/counter/);
  });

  it('uniform positions include both ends', () => {
    const { positions } = uniformPositions(claude, { count: 4 });
    expect(positions.map((p) => p.value)).toEqual([1, 9, 16, 24]);
    expect(positions.map((p) => p.label)).toEqual(['P00', 'P01', 'P02', 'P03']);
    expect(positions.at(-1)!.end).toBe(26);
    expect(() => uniformPositions(claude, { count: 30 })).toThrow(/at least 30/);
  });

  it('deciles of assistant messages', () => {
    const { positions } = decilePositions(claude);
    expect(positions.map((p) => p.value)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    expect(positions[0]!.label).toBe('Q010');
    expect(positions.at(-1)!.label).toBe('Q100');
    expect(new Set(positions.map((p) => p.end)).size).toBe(10);
  });

  it('explicit steps such as the onset sweep, with out-of-range ones dropped on request', () => {
    expect(ONSET_STEPS).toEqual([1, 5, 25, 100, 250, 500, 1000, 1500]);
    const { positions, warnings } = explicitPositions(claude, ONSET_STEPS, { beyond: 'drop' });
    expect(positions.map((p) => p.label)).toEqual(['T0001', 'T0005']);
    expect(warnings).toHaveLength(6);
    expect(() => explicitPositions(claude, ONSET_STEPS)).toThrow(/T0025/);
  });

  it('pre/post each compaction (docs/decisions.md#d14)', () => {
    const c = compactionPositions(claude, { postOffset: 2 });
    expect(c.positions.map((p) => [p.label, p.end, p.segment])).toEqual([
      ['C1-pre', 17, 0],
      ['C1-post', 19, 1],
    ]);
    expect(c.positions[0]!.reached).toBe(17);
    const byDefault = compactionPositions(claude);
    expect(byDefault.positions.map((p) => p.label)).toEqual(['C1-pre']);
    expect(byDefault.warnings[0]).toMatch(/C1-post \(agentSteps 117\) is beyond the session/);
    const cx = compactionPositions(codex, { postOffset: 1 });
    expect(cx.positions.map((p) => [p.label, p.end])).toEqual([
      ['C1-pre', 15],
      ['C1-post', 16],
      ['C2-pre', 20],
      ['C2-post', 21],
    ]);
  });

  it('parses CLI position specs', () => {
    expect(parsePositionSpec('agentSteps=1300')).toEqual({ counter: 'agentSteps', value: 1300 });
    expect(parsePositionSpec('42')).toEqual({ counter: 'agentSteps', value: 42 });
    expect(parsePositionSpec('userTurns=3')).toEqual({ counter: 'userTurns', value: 3 });
    expect(() => parsePositionSpec('turns=3')).toThrow(/counter/);
    expect(() => parsePositionSpec('agentSteps=-1')).toThrow(/--at/);
  });
});
