import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseCsvTable, toCsv } from '../core/csv.js';
import { InputError } from '../core/errors.js';
import { thrownBy } from '../core/testing/thrown.js';
import {
  exportStepLabelSheet,
  type LabelledStepSource,
  parseStepLabelSheet,
  sampleStepLabels,
  type StepLabelItem,
  type StepLabelKey,
  stepLabelAgreement,
} from './label-sheet.js';

interface Golden {
  symbols: string[];
  items: Array<{ item_id: string; model: string; human: string }>;
  compared: number;
  agreed: number;
  kappa: number | null;
  rootKappa: number | null;
  perRoot: Record<string, number | null>;
  perSymbol: Record<string, number | null>;
}
// tools/golden/step_label_kappa.py: κ from its definition with numpy, checked against statsmodels.
const golden = JSON.parse(readFileSync(join(import.meta.dirname, '__fixtures__', 'golden-step-kappa.json'), 'utf8')) as Golden;

const item = (itemId: string, modelLabel: string): StepLabelItem => ({
  itemId,
  questionId: 'q',
  question: 'Should I?',
  target: 't',
  condition: 'no_perturbation',
  step: 1,
  stepText: 'a step',
  modelLabel,
});

function keyOf(items: StepLabelItem[], blind = false): StepLabelKey {
  return { kind: 'echolens-step-label-key', runId: 'r', labeler: 'sim:labeler', blind, symbols: golden.symbols, items };
}

/** Fills the exported sheet's human_label column, as a reviewer would. */
function fill(sheet: string, labels: ReadonlyMap<string, string>): string {
  const table = parseCsvTable(sheet);
  return toCsv(
    table.header,
    table.rows.map((row) => table.header.map((h) => (h === 'human_label' ? (labels.get(row.values.item_id!) ?? '') : row.values[h]!))),
  );
}

describe('step-label sheet round trip', () => {
  it('matches the golden κ (numpy definition, statsmodels) overall, by root category and one-versus-rest', () => {
    const key = keyOf(golden.items.map((g) => item(g.item_id, g.model)));
    // Mixed spellings a reviewer might use: lower case and spaces around the slash.
    const humanOf = new Map(golden.items.map((g, i) => [g.item_id, i % 3 === 0 ? g.human.toLowerCase().replace('/', ' / ') : g.human]));
    const sheet = fill(exportStepLabelSheet(key.items), humanOf);
    const result = stepLabelAgreement(key, parseStepLabelSheet(sheet, 'sheet.csv', key));
    expect(result.compared).toBe(golden.compared);
    expect(result.agreed).toBe(golden.agreed);
    expect(result.ambiguous).toBe(golden.items.length - golden.compared);
    expect(result.kappa).toBeCloseTo(golden.kappa!, 12);
    expect(result.rootKappa).toBeCloseTo(golden.rootKappa!, 12);
    for (const c of result.perRoot) {
      const want = golden.perRoot[c.category];
      if (want === null || want === undefined) expect(c.kappa).toHaveProperty('error');
      else expect([c.category, c.kappa]).toEqual([c.category, expect.closeTo(want, 12)]);
    }
    expect(result.perSymbol.map((c) => c.category).sort()).toEqual(Object.keys(golden.perSymbol).sort());
    for (const c of result.perSymbol) {
      const want = golden.perSymbol[c.category];
      if (want === null || want === undefined) expect(c.kappa).toHaveProperty('error');
      else expect([c.category, c.kappa]).toEqual([c.category, expect.closeTo(want, 12)]);
    }
  });

  it('a blind sheet hides the model label; "agree" works only where it is shown; blanks are left out', () => {
    const items = [item('a#1', golden.symbols[0]!), item('b#1', golden.symbols[1]!), item('c#1', golden.symbols[2]!)];
    expect(parseCsvTable(exportStepLabelSheet(items, { blind: true })).header).not.toContain('model_label');
    const shown = fill(
      exportStepLabelSheet(items),
      new Map([
        ['a#1', 'agree'],
        ['b#1', golden.symbols[0]!],
      ]),
    );
    const result = stepLabelAgreement(keyOf(items), parseStepLabelSheet(shown, 's.csv', keyOf(items)));
    expect(result).toMatchObject({ items: 3, reviewed: 2, compared: 2, agreed: 1, exact: 0.5 });
    const blind = fill(exportStepLabelSheet(items, { blind: true }), new Map([['a#1', 'agree']]));
    const error = thrownBy(() => parseStepLabelSheet(blind, 'blind.csv', keyOf(items, true)), InputError);
    expect(error.message).toMatch(/blind\.csv:2.*human_label.*agree/s);
  });

  it('names the line and field of a label outside the ontology and of an unknown item', () => {
    const items = [item('a#1', golden.symbols[0]!)];
    const bad = fill(exportStepLabelSheet(items), new Map([['a#1', 'Social/Friendship']]));
    expect(thrownBy(() => parseStepLabelSheet(bad, 'bad.csv', keyOf(items)), InputError).message).toMatch(/bad\.csv:2.*human_label.*Social\/Friendship/s);
    const unknown = toCsv(['item_id', 'human_label'], [['zzz#9', 'unmapped']]);
    expect(thrownBy(() => parseStepLabelSheet(unknown, 'u.csv', keyOf(items)), InputError).message).toMatch(/u\.csv:2.*item_id/s);
  });

  it('κ is refused with a reason when both raters used one label throughout', () => {
    const items = [item('a#1', golden.symbols[0]!), item('b#1', golden.symbols[0]!)];
    const sheet = fill(
      exportStepLabelSheet(items),
      new Map([
        ['a#1', 'agree'],
        ['b#1', 'agree'],
      ]),
    );
    const result = stepLabelAgreement(keyOf(items), parseStepLabelSheet(sheet, 's.csv', keyOf(items)));
    expect(result.exact).toBe(1);
    expect(result.kappa).toHaveProperty('error');
  });
});

describe('sampling labelled steps', () => {
  const record = (key: string, steps: string[], symbols: string[] | null, outcome = 'labelled'): LabelledStepSource => ({
    generationKey: key,
    outcome,
    steps,
    sample: { question: `q-${key}`, target: 't', condition: 'filler', symbols },
  });
  const records = [
    record('k1', ['s1', 's2'], ['A/a', 'B/b']),
    record('k2', ['s1'], ['A/a']),
    record('k3', ['s1', 's2', 's3'], ['A/a', 'A/a', 'C/c']),
    record('k4', ['s1', 's2'], ['A/a']), // labels do not align with steps: left out
    record('k5', ['s1'], null, 'invalid'),
  ];

  it('draws n of the eligible steps, reproducibly for a seed, each at most once', () => {
    const all = sampleStepLabels(records, { n: 100, seed: 1 });
    expect(all).toHaveLength(6);
    expect(new Set(all.map((s) => s.itemId)).size).toBe(6);
    expect(all.every((s) => !s.itemId.startsWith('k4') && !s.itemId.startsWith('k5'))).toBe(true);
    const three = sampleStepLabels(records, { n: 3, seed: 7 });
    expect(three).toEqual(sampleStepLabels(records, { n: 3, seed: 7 }));
    expect(three).toHaveLength(3);
    const k3 = all.find((s) => s.itemId === 'k3#3')!;
    expect(k3).toMatchObject({ step: 3, stepText: 's3', modelLabel: 'C/c', questionId: 'q-k3' });
    // Different seeds give different orders over 6! permutations (checked on a few seeds).
    const orders = new Set(
      [1, 2, 3, 4].map((seed) =>
        sampleStepLabels(records, { n: 6, seed })
          .map((s) => s.itemId)
          .join(),
      ),
    );
    expect(orders.size).toBeGreaterThan(1);
    expect(() => sampleStepLabels(records, { n: 0, seed: 1 })).toThrow(/n/);
  });
});
