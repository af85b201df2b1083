import { describe, expect, it } from 'vitest';
import type { CellLabels } from '../store/types.js';
import {
  decodePersonaJudgeLabels,
  decodePersonaTargetLabels,
  judgeLabelsSchema,
  plainJudgeLabels,
  plainTargetLabels,
  resolveJudgeVerdicts,
  targetLabelsSchema,
} from './labels.js';

/** Labels as plan.ts writes them (with a key the schema does not name). */
const TARGET: CellLabels = {
  arm: 'real',
  bareProbe: 'Who are you?',
  category: 'identity',
  compactionIndex: null,
  compactionSide: null,
  continuationClipped: null,
  continuationMessages: null,
  distance: 'd0',
  experiment: 'persona',
  framed: true,
  item: 'I01',
  mitigation: 'none',
  paraphrase: 0,
  position: 'U01',
  positionValue: 10,
  sample: 0,
  selectedBy: null,
  session: 'S1',
  stage: 'target',
  surface: 'probe',
  systemPrompt: 'probe-reference',
  target: 'sim:t',
};
const JUDGE: CellLabels = { attempt: 0, experiment: 'persona', judge: 'sim:j', stage: 'judge', targetKey: 'abc' };

/** Wrong and edge values for each field: the plain check must never accept what the schema refuses. */
const PROBES: unknown[] = [undefined, null, 'x', '', 0, 1, -1, 1.5, Number.NaN, true, false, [], {}, 'pre', 'post', 'probe', 'both', 2 ** 60];

function variants(base: CellLabels): CellLabels[] {
  const out: CellLabels[] = [base, { ...base, extra: 1 }];
  for (const key of [...Object.keys(base), 'anchorArm', 'anchorSize', 'anchorTokens', 'anchorPlacement', 'anchorTurns', 'attempt']) {
    for (const value of PROBES) {
      const v: CellLabels = { ...base };
      if (value === undefined) delete v[key];
      else v[key] = value as CellLabels[string];
      out.push(v);
    }
  }
  return out;
}

describe('plain label checks agree with the schemas', () => {
  for (const [name, base, plain, schema] of [
    ['target', TARGET, plainTargetLabels, targetLabelsSchema],
    ['judge', JUDGE, plainJudgeLabels, judgeLabelsSchema],
  ] as const) {
    it(`${name}: accepted only when the schema accepts, with the schema's values`, () => {
      let accepted = 0;
      let refused = 0;
      for (const labels of variants(base)) {
        const viaSchema = schema.safeParse(labels);
        if (plain(labels)) {
          accepted += 1;
          // The schema accepts it, with the same value for every field it names.
          expect(viaSchema.success).toBe(true);
          for (const [key, value] of Object.entries(viaSchema.data ?? {})) expect((labels as Record<string, unknown>)[key]).toEqual(value);
        } else {
          refused += 1;
        }
      }
      // Both branches are exercised: written labels take the plain path, bad ones the schema's.
      expect(plain(base)).toBe(true);
      expect(accepted).toBeGreaterThan(10);
      expect(refused).toBeGreaterThan(10);
    });
  }

  it('bad labels still fail with the field named (through the schema)', () => {
    expect(() => decodePersonaTargetLabels({ ...TARGET, surface: 'nope' }, 'cellkey123456')).toThrow(/persona target cell cellkey12345: label "surface"/u);
    expect(() => decodePersonaJudgeLabels({ ...JUDGE, attempt: -1 }, 'cellkey123456')).toThrow(/label "attempt"/u);
  });
});

describe('resolveJudgeVerdicts', () => {
  interface Cell {
    key: string;
    labels: CellLabels;
    text: string | null;
  }
  const judge = (targetKey: string, name: string, attempt: number, text: string | null): Cell => ({
    key: `${targetKey}-${name}-${attempt}`,
    labels: { stage: 'judge', experiment: 'persona', judge: name, targetKey, attempt },
    text,
  });
  const access = { labels: (c: Cell) => c.labels, key: (c: Cell) => c.key, text: (c: Cell) => c.text };

  it('walks each chain (target, judge) in attempt order: the first parsed answer wins, a chain of failures is invalid', () => {
    const cells = [
      judge('t1', 'a', 1, '{"score": 2}'),
      judge('t1', 'a', 0, 'not json'),
      judge('t1', 'b', 0, '{"score": 0}'),
      judge('t2', 'a', 0, 'nope'),
      judge('t3', 'a', 0, null),
      { key: 'target', labels: { stage: 'target' }, text: 'hi' },
    ];
    const out = resolveJudgeVerdicts(cells, access);
    expect([...out.keys()]).toEqual(['t1', 't2']);
    expect(out.get('t1')?.get('a')).toMatchObject({ attempt: 1, verdict: { score: 2 }, error: null, cell: { key: 't1-a-1' } });
    expect(out.get('t1')?.get('b')).toMatchObject({ attempt: 0, verdict: { score: 0 } });
    expect(out.get('t2')?.get('a')).toMatchObject({ attempt: 0, verdict: null, error: 'output is not a single JSON object' });
  });
});
