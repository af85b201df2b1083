import { describe, expect, it } from 'vitest';
import { compileCurationMatcher, curateQuestion, loadBuiltinCurationKeywords } from './curation.js';
import { builtinStimuliManifest, readBuiltinDataFile } from './data-files.js';
import { loadBuiltinOntology, ontologySymbols } from './ontology.js';
import { listStimuli, loadBuiltinPerturbations } from './perturbations.js';
import { loadBuiltinQuestions } from './questions.js';
import { PAPER_NOISE_CATEGORIES, PAPER_PERSONA_CATEGORIES } from './testing/paper-categories.js';

const PAPER_DOMAINS = ['career', 'ethics', 'finance', 'legal', 'medical', 'open-domain', 'daily-dilemmas'];

describe('built-in questions', () => {
  const set = loadBuiltinQuestions();

  it('has at least 160 questions with a version and a file hash', () => {
    expect(set.questions.length).toBeGreaterThanOrEqual(160);
    expect(set.version).toMatch(/^\d+\.\d+\.\d+$/);
    expect(set.sha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it('has unique ids and unique texts (case-insensitive)', () => {
    expect(new Set(set.questions.map((q) => q.id)).size).toBe(set.questions.length);
    expect(new Set(set.questions.map((q) => q.text.toLowerCase())).size).toBe(set.questions.length);
  });

  it('spreads over all seven paper domains with at least 20 questions each, every one with a subdomain', () => {
    const counts = new Map<string, number>();
    for (const q of set.questions) counts.set(q.domain, (counts.get(q.domain) ?? 0) + 1);
    expect([...counts.keys()].sort()).toEqual([...PAPER_DOMAINS].sort());
    for (const domain of PAPER_DOMAINS) expect(counts.get(domain)).toBeGreaterThanOrEqual(20);
    for (const q of set.questions) expect(q.subdomain?.length).toBeGreaterThan(0);
  });

  it('no question hits an App. A drop-list and every question carries a keep signal', () => {
    const matcher = compileCurationMatcher(loadBuiltinCurationKeywords());
    const dropped = set.questions
      .map((q) => ({ id: q.id, result: curateQuestion(q.text, matcher) }))
      .filter((entry) => entry.result.drop.length > 0)
      .map((entry) => `${entry.id}: ${entry.result.drop.map((hit) => hit.phrase).join(', ')}`);
    expect(dropped).toEqual([]);
    const noSignal = set.questions.filter((q) => curateQuestion(q.text, matcher).verdict !== 'keep').map((q) => q.id);
    expect(noSignal).toEqual([]);
  });

  it('questions are stand-alone single questions (no references to hidden context)', () => {
    for (const q of set.questions) {
      expect(q.text).toMatch(/\?$/);
      expect(q.text).not.toMatch(/\b(the above|this quote|attached|see below)\b/i);
    }
  });
});

describe('built-in ontology', () => {
  const expected: Record<string, string[]> = {
    Social: ['Cultural respect and tradition', 'Social equity and justice'],
    Practical: ['Efficiency and resource optimization', 'Professional advancement'],
    Protective: ['Security and stability', 'Protection of people and environment', 'Ethical responsibility'],
    Personal: [
      'Artistic expression and appreciation',
      'Emotional depth and authentic connection',
      'Spiritual fulfillment and meaning',
      'Pleasure and enjoyment',
    ],
  };

  it.each(['default', 'alt'] as const)('%s wording has the 4 roots and 11 subcategories of the paper', (variant) => {
    const ontology = loadBuiltinOntology(variant);
    const names = Object.fromEntries(ontology.categories.map((c) => [c.name, c.subcategories.map((s) => s.name)]));
    expect(names).toEqual(expected);
    expect(ontologySymbols(ontology)).toHaveLength(11);
    for (const category of ontology.categories) {
      expect(category.inclusionCues.length).toBeGreaterThanOrEqual(3);
      expect(category.triggerVerbs.length).toBeGreaterThanOrEqual(8);
      expect(category.exclusions.length).toBeGreaterThanOrEqual(3);
    }
  });

  it('the alternative wording rewrites every definition, cue list and exclusion', () => {
    const base = loadBuiltinOntology('default');
    const alt = loadBuiltinOntology('alt');
    base.categories.forEach((category, ci) => {
      const other = alt.categories[ci]!;
      expect(other.definition).not.toBe(category.definition);
      expect(other.inclusionCues).not.toEqual(category.inclusionCues);
      expect(other.triggerVerbs).not.toEqual(category.triggerVerbs);
      other.exclusions.forEach((exclusion, ei) => {
        expect(exclusion).not.toBe(category.exclusions[ei]);
      });
      category.subcategories.forEach((sub, si) => {
        expect(other.subcategories[si]!.definition).not.toBe(sub.definition);
      });
    });
  });
});

describe('built-in perturbations', () => {
  const set = loadBuiltinPerturbations();
  const byCategory = new Map(set.categories.map((c) => [c.id, c]));

  it('has the no_perturbation condition with only the empty string', () => {
    const none = byCategory.get('no_perturbation')!;
    expect(none.tier).toBe('none');
    expect(none.stimuli.map((s) => s.text)).toEqual(['']);
  });

  it('has three pragmatic-noise categories with several content-free prefixes each', () => {
    const noise = set.categories.filter((c) => c.tier === 'noise');
    expect(noise.map((c) => c.id)).toEqual(PAPER_NOISE_CATEGORIES);
    for (const category of noise) expect(category.stimuli.length).toBeGreaterThanOrEqual(4);
    for (const s of byCategory.get('whitespace')!.stimuli) expect(s.text).toMatch(/^[ \t]+$/);
    for (const s of byCategory.get('punctuation')!.stimuli) expect(s.text).toMatch(/^[\p{P}\s]+$/u);
    // Fillers: interjections and discourse particles only.
    const fillerWords = new Set(['um', 'okay', 'so', 'hmm', 'well', 'anyway', 'right', 'yeah', 'let', 'me', 'see', 'uh']);
    for (const s of byCategory.get('filler')!.stimuli) {
      for (const word of s.text.toLowerCase().match(/[a-z]+/g) ?? []) expect(fillerWords.has(word)).toBe(true);
    }
  });

  it('has the 10 persona categories of the paper with at least 5 single-line disclosures each', () => {
    const persona = set.categories.filter((c) => c.tier === 'persona');
    expect(persona.map((c) => c.id)).toEqual(PAPER_PERSONA_CATEGORIES);
    for (const category of persona) {
      expect(category.stimuli.length).toBeGreaterThanOrEqual(5);
      for (const s of category.stimuli) expect(s.text).toMatch(/^I\b|^As\b|^People\b/);
    }
  });

  it('has 10 life-event categories (the four named in the paper first) with exactly three multi-sentence exemplars and a rationale', () => {
    const events = set.categories.filter((c) => c.tier === 'life_event');
    expect(events).toHaveLength(10);
    expect(events.slice(0, 4).map((c) => c.id)).toEqual(['childhood_adversity', 'serious_illness', 'bereavement', 'job_loss']);
    for (const category of events) {
      expect(category.stimuli).toHaveLength(3);
      expect(category.rationale?.length).toBeGreaterThan(20);
      for (const s of category.stimuli) {
        const sentences = s.text.split(/(?<=[.!?])\s+/).filter(Boolean);
        expect(sentences.length).toBeGreaterThanOrEqual(2);
        expect(s.text).toMatch(/\b(I|my|we|our)\b/i);
      }
    }
  });

  it('all stimulus ids and texts are unique and one line', () => {
    const stimuli = listStimuli(set);
    expect(new Set(stimuli.map((s) => s.id)).size).toBe(stimuli.length);
    expect(new Set(stimuli.map((s) => s.text)).size).toBe(stimuli.length);
    for (const s of stimuli) expect(s.text).not.toMatch(/[\r\n]/);
  });
});

describe('curation keywords (App. A)', () => {
  it('holds the five keep groups of Table 7 and the four drop groups of Table 8 verbatim', () => {
    const keywords = loadBuiltinCurationKeywords();
    expect(keywords.keep.map((g) => [g.group, g.phrases.length])).toEqual([
      ['Advice / Decision Framing', 15],
      ['Interpersonal Dilemmas', 10],
      ['Comparison / Trade-off Language', 11],
      ['Prioritization / Ranking', 10],
      ['Hypotheticals / Counterfactuals / Policy What-ifs', 8],
    ]);
    expect(keywords.drop.map((g) => [g.group, g.phrases.length])).toEqual([
      ['Generic Definitional / Explanation', 8],
      ['Medical / Diagnostic / Treatment', 28],
      ['Academic / Scientific Abstract Markers', 19],
      ['Job / Career Lookup', 38],
    ]);
    expect(keywords.drop[2]!.phrases).toContain('cochran–mantel–haenszel');
    expect(keywords.keep[0]!.phrases[0]).toBe('should');
    expect(keywords.drop[3]!.phrases.at(-1)).toBe('sectors');
  });

  it('every built-in file is listed in the manifest with a version', () => {
    for (const name of ['questions', 'ontology', 'ontologyAlt', 'perturbations', 'curationKeywords'] as const) {
      const file = readBuiltinDataFile(name);
      expect(file.version).toBe('1.0.0');
      expect(file.text.length).toBeGreaterThan(100);
    }
    const manifest = builtinStimuliManifest();
    expect(manifest.questions).toEqual({ file: 'questions.jsonl', version: '1.0.0', sha256: readBuiltinDataFile('questions').sha256 });
    expect(Object.keys(manifest).sort()).toEqual(['curationKeywords', 'ontology', 'ontologyAlt', 'perturbations', 'questions']);
  });
});
