import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { loadBuiltinOntology, loadOntologyFile, ontologySymbols, parseOntology, parseSymbol, renderOntology } from './ontology.js';
import { listStimuli, parsePerturbationSet } from './perturbations.js';

const YAML = `
name: tiny
version: "2"
categories:
  - name: Care
    definition: Looking after someone.
    triggerVerbs: [help, comfort]
    subcategories:
      - name: Family
        definition: Care for relatives.
      - name: Strangers
        definition: Care for people one does not know.
  - name: Craft
    definition: Making things well.
    subcategories:
      - name: Quality
        definition: Doing the work carefully.
`;

describe('ontology loader', () => {
  it('reads a custom ontology from YAML and JSON with the same result', () => {
    const fromYaml = parseOntology(YAML, 'o.yaml', 'yaml');
    expect(ontologySymbols(fromYaml)).toEqual(['Care/Family', 'Care/Strangers', 'Craft/Quality']);
    expect(fromYaml.categories[1]!.triggerVerbs).toEqual([]);
    const fromJson = parseOntology(JSON.stringify(fromYaml), 'o.json');
    expect(fromJson).toEqual(fromYaml);
    const dir = mkdtempSync(join(tmpdir(), 'echolens-onto-'));
    writeFileSync(join(dir, 'o.yml'), YAML);
    expect(loadOntologyFile(join(dir, 'o.yml'))).toEqual(fromYaml);
    expect(() => loadOntologyFile(join(dir, 'o.txt'))).toThrow(/unsupported ontology file type/);
  });

  it('accepts the reference repository layout (root → description, children)', () => {
    const reference = {
      'Social values': { description: 'Conduct toward others.', children: [{ name: 'Fairness', description: 'Equal treatment.' }] },
    };
    const ontology = parseOntology(JSON.stringify(reference), 'ref.json');
    expect(ontologySymbols(ontology)).toEqual(['Social values/Fairness']);
  });

  it('names the field of duplicate names, empty definitions, slashes and the reserved symbol', () => {
    const base = parseOntology(YAML, 'o.yaml', 'yaml');
    const clone = () => structuredClone(base);
    const dupCategory = clone();
    dupCategory.categories[1]!.name = 'care';
    expect(() => parseOntology(JSON.stringify(dupCategory), 'o.json')).toThrow('o.json: categories.1.name: duplicate category name "care"');
    const dupSub = clone();
    dupSub.categories[0]!.subcategories[1]!.name = 'Family';
    expect(() => parseOntology(JSON.stringify(dupSub), 'o.json')).toThrow(/categories\.0\.subcategories\.1\.name: duplicate/);
    const empty = clone();
    empty.categories[0]!.subcategories[0]!.definition = '   ';
    expect(() => parseOntology(JSON.stringify(empty), 'o.json')).toThrow(
      /^o\.json: categories\.0\.subcategories\.0\.definition: must be a non-empty definition/,
    );
    const slash = clone();
    slash.categories[0]!.name = 'Care/Help';
    expect(() => parseOntology(JSON.stringify(slash), 'o.json')).toThrow(/must not contain "\/"/);
    const reserved = clone();
    reserved.categories[0]!.subcategories[0]!.name = 'Unmapped';
    expect(() => parseOntology(JSON.stringify(reserved), 'o.json')).toThrow(/reserved/);
    expect(() => parseOntology('categories: [', 'o.yaml', 'yaml')).toThrow(InputError);
    expect(() => parseOntology('{"categories":[]}', 'o.json')).toThrow(/needs at least one category/);
  });

  it('symbols split back into category and subcategory; unmapped has neither', () => {
    expect(parseSymbol('Protective/Security and stability')).toEqual({ category: 'Protective', subcategory: 'Security and stability' });
    expect(parseSymbol('unmapped')).toBeNull();
    expect(() => parseSymbol('Protective')).toThrow(/not Category\/Subcategory/);
  });

  it('renders definitions, cues, verbs and exclusions as clean text', () => {
    const text = renderOntology(loadBuiltinOntology());
    expect(text).toContain('## Protective');
    expect(text).toContain('- Protective/Ethical responsibility: ');
    expect(text).toMatch(/Trigger verbs and modals: .*must not/);
    expect(text).toMatch(/Exclude: contains no judgment of factual truth/);
    expect(text).not.toMatch(/[{}]/);
  });
});

describe('perturbation set validation', () => {
  const valid = {
    categories: [
      { id: 'no_perturbation', tier: 'none', stimuli: [{ id: 'none', text: '' }] },
      { id: 'hobby', tier: 'persona', stimuli: [{ id: 'hobby.1', text: 'I knit.' }] },
    ],
  };
  it('accepts a custom set and flattens it with tiers', () => {
    const set = parsePerturbationSet(JSON.stringify(valid), 'p.json');
    expect(listStimuli(set)).toEqual([
      { id: 'none', text: '', category: 'no_perturbation', tier: 'none' },
      { id: 'hobby.1', text: 'I knit.', category: 'hobby', tier: 'persona' },
    ]);
    expect(set.version).toBe('unversioned');
  });
  it('rejects multi-line texts, empty persona texts, non-empty none texts and duplicates, naming the field', () => {
    const bad = (mutate: (v: typeof valid) => void) => {
      const copy = structuredClone(valid);
      mutate(copy);
      return () => parsePerturbationSet(JSON.stringify(copy), 'p.json');
    };
    expect(bad((v) => (v.categories[1]!.stimuli[0]!.text = 'I knit.\nA lot.'))).toThrow(
      'p.json: categories.1.stimuli.0.text: a perturbation must be a single line',
    );
    expect(bad((v) => (v.categories[1]!.stimuli[0]!.text = ''))).toThrow(/only the none tier may be empty/);
    expect(bad((v) => (v.categories[0]!.stimuli[0]!.text = 'x'))).toThrow(/none tier holds only the empty string/);
    expect(bad((v) => v.categories[1]!.stimuli.push({ id: 'hobby.1', text: 'I sew.' }))).toThrow(/duplicate stimulus id/);
    expect(bad((v) => v.categories[1]!.stimuli.push({ id: 'hobby.2', text: 'I knit.' }))).toThrow(/text duplicates stimulus "hobby.1"/);
    expect(bad((v) => (v.categories[1]!.tier = 'mood'))).toThrow(/categories\.1\.tier/);
  });
});
