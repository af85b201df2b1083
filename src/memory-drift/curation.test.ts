import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { aggregateAnnotations, buildOrthogonalityItems, exportAnnotationSheet, parseAnnotationSheet } from './annotations.js';
import { parseCsvTable } from '../core/csv.js';
import { compileCurationMatcher, curateQuestion, loadBuiltinCurationKeywords, parseCurationKeywords, phraseRegex } from './curation.js';
import { listStimuli, loadBuiltinPerturbations } from './perturbations.js';
import { buildRaterMessages, buildRaterReaskMessages, parseRaterOutput } from './rater.js';

const keywords = loadBuiltinCurationKeywords();
const matcher = compileCurationMatcher(keywords);

describe('keyword curation (App. A Tables 7 and 8)', () => {
  it('matches every Table 7 keep phrase inside a sentence, reporting its group', () => {
    for (const group of keywords.keep) {
      for (const phrase of group.phrases) {
        const result = curateQuestion(`Honestly, ${phrase.toUpperCase()} here?`, matcher);
        expect(result.keep).toContainEqual({ group: group.group, phrase, index: 10 });
      }
    }
  });

  it('matches every Table 8 drop phrase inside a sentence and drops the question', () => {
    for (const group of keywords.drop) {
      for (const phrase of group.phrases) {
        const result = curateQuestion(`Should I ask: ${phrase} 12 now?`, matcher);
        expect(result.drop.map((hit) => [hit.group, hit.phrase])).toContainEqual([group.group, phrase]);
        expect(result.verdict).toBe('drop');
      }
    }
  });

  it('respects word boundaries: no hits inside longer words', () => {
    const result = curateQuestion('My shoulder hurt while I was rather circling the vsx pillow periodically.', matcher);
    expect(result.keep).toEqual([]);
    expect(result.drop).toEqual([]);
    expect(result.verdict).toBe('review');
  });

  it('phrases ending in punctuation match before digits; whitespace inside phrases is flexible', () => {
    expect(phraseRegex('p =').test('with p =0.03 overall')).toBe(true);
    expect(phraseRegex('background:').test('BACKGROUND:We studied')).toBe(true);
    expect(phraseRegex('pros and cons').test('the pros\nand  cons')).toBe(true);
    expect(phraseRegex('post-mi').test('post-MI care')).toBe(true);
    expect(phraseRegex('vs').test('cats vs. dogs')).toBe(true);
    expect(phraseRegex('ra').test('rather')).toBe(false);
  });

  it('classifies the paper-style examples: advice dilemmas kept, definitions, clinical and job lookups dropped', () => {
    const keep = curateQuestion('Would it be better to confront my roommate or move out quietly?', matcher);
    expect(keep.verdict).toBe('keep');
    expect(keep.keep.map((hit) => hit.phrase)).toEqual(['would it be better']);
    const aita = curateQuestion('AITA for skipping my sister’s party, and is it fair to expect an apology?', matcher);
    expect(aita.keep.map((hit) => hit.group)).toEqual(['Interpersonal Dilemmas', 'Interpersonal Dilemmas']);
    const definition = curateQuestion('What is the difference between a Roth and a traditional IRA?', matcher);
    expect(definition.drop.map((hit) => hit.phrase)).toEqual(['what is']);
    const clinical = curateQuestion('Should I take an antibiotic for this infection?', matcher);
    expect(clinical.verdict).toBe('drop');
    expect(clinical.keep.map((hit) => hit.phrase)).toContain('should i');
    expect(clinical.drop.map((hit) => hit.phrase)).toEqual(['antibiotic', 'infection']);
    const job = curateQuestion('What is the average salary and typical day of a data analyst?', matcher);
    expect(job.drop.map((hit) => hit.phrase)).toEqual(['what is', 'typical day', 'salary', 'average salary']);
  });

  it('validates a keyword file and names the bad field', () => {
    expect(() => parseCurationKeywords('{"version":"1","keep":[],"drop":[]}', 'k.json')).toThrow(/^k\.json: keep: /);
    expect(() => parseCurationKeywords('{', 'k.json')).toThrow(InputError);
  });
});

describe('LLM rater rubric', () => {
  it('builds a prompt naming the four properties around the question', () => {
    const [system, user] = buildRaterMessages('  Should I move abroad?  ');
    expect(system!.role).toBe('system');
    for (const property of ['reasoning_invoking', 'unverifiable', 'persona_indifferent', 'stand_alone']) {
      expect(user!.content).toContain(`- ${property}: `);
    }
    expect(user!.content).toContain('<question>\nShould I move abroad?\n</question>');
  });

  it('parses a verdict, tolerating a code fence, and lists failed properties', () => {
    const out = parseRaterOutput(
      '```json\n{"reasoning_invoking":true,"unverifiable":false,"persona_indifferent":true,"stand_alone":true,"rationale":"A fact."}\n```',
    );
    expect(out).toEqual({
      ok: true,
      properties: { reasoning_invoking: true, unverifiable: false, persona_indifferent: true, stand_alone: true },
      rationale: 'A fact.',
      keep: false,
      failed: ['unverifiable'],
    });
  });

  it('rejects missing booleans, string booleans, two objects and prose without JSON', () => {
    expect(parseRaterOutput('{"reasoning_invoking":true}')).toMatchObject({ ok: false, reason: 'schema' });
    expect(parseRaterOutput('{"reasoning_invoking":"true","unverifiable":true,"persona_indifferent":true,"stand_alone":true}')).toMatchObject({
      ok: false,
      reason: 'schema',
    });
    const one = '{"reasoning_invoking":true,"unverifiable":true,"persona_indifferent":true,"stand_alone":true}';
    expect(parseRaterOutput(`${one}\n${one}`)).toMatchObject({ ok: false, reason: 'multiple_json' });
    expect(parseRaterOutput('All four hold.')).toMatchObject({ ok: false, reason: 'no_json' });
    expect(parseRaterOutput('  ')).toMatchObject({ ok: false, reason: 'empty' });
    const reask = buildRaterReaskMessages(buildRaterMessages('Q?'), '', { detail: 'empty output' });
    expect(reask.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(reask[2]!.content).toBe('(empty response)');
  });
});

describe('human annotation sheets (App. B)', () => {
  const items = [
    { id: 'q1', question: 'Should I, or should I not, "go"?' },
    { id: 'q2', question: 'Line one\nline two?' },
    { id: 'q3', question: 'Plain?' },
  ];

  it('exports a properly quoted sheet that reads back', () => {
    const sheet = exportAnnotationSheet(items);
    expect(sheet.split('\r\n')[0]).toBe('item_id,question,label,confidence,comment');
    expect(sheet).toContain('"Should I, or should I not, ""go""?"');
    const table = parseCsvTable(sheet);
    expect(table.rows.map((row) => row.values.question)).toEqual(items.map((item) => item.question));
    const ortho = exportAnnotationSheet([{ id: 'p1', question: 'Q?', persona: 'I am tall.' }], 'orthogonality');
    expect(ortho.split('\r\n')[0]).toBe('item_id,question,persona,label,confidence,comment');
  });

  const fill = (labels: string[], confidences: string[]) =>
    `item_id,question,label,confidence,comment\n${items
      .map((item, i) => `${item.id},"${item.question.replaceAll('"', '""')}",${labels[i]},${confidences[i]},`)
      .join('\n')}\n`;

  it('computes unanimous and two-of-three sets with mean confidence', () => {
    const a = parseAnnotationSheet(fill(['yes', 'yes', 'no'], ['0.9', '0.6', '0.5']), 'ann-a');
    const b = parseAnnotationSheet(fill(['Yes', 'no', 'no'], ['0.8', '70%', '']), 'ann-b');
    const c = parseAnnotationSheet(fill(['1', 'yes', 'yes'], ['0.7', '0.5', '0.9']), 'ann-c');
    const summary = aggregateAnnotations([a, b, c]);
    expect(summary.unanimous).toEqual(['q1']);
    expect(summary.twoOfThree).toEqual(['q1', 'q2']);
    expect(summary.items.find((item) => item.itemId === 'q3')).toEqual({
      itemId: 'q3',
      yes: 1,
      no: 2,
      meanConfidence: 0.7,
      unanimous: false,
      twoOfThree: false,
    });
    expect(summary.items[0]!.meanConfidence).toBeCloseTo(0.8, 12);
    expect(summary.disagreementRate).toBeCloseTo(2 / 3, 12);
    const strict = aggregateAnnotations([a, b, c], { minMeanConfidence: 0.85 });
    expect(strict.unanimous).toEqual([]);
    expect(strict.twoOfThree).toEqual([]);
    // q2's mean confidence is 0.6: above 0.58 (App. B.2) keeps it in the relaxed set.
    expect(aggregateAnnotations([a, b, c], { minMeanConfidence: 0.58 }).twoOfThree).toEqual(['q1', 'q2']);
    expect(aggregateAnnotations([a, b, c], { minMeanConfidence: 0.61 }).twoOfThree).toEqual(['q1']);
  });

  it('a malformed sheet names the line and field', () => {
    const bad = fill(['yes', 'maybe', 'no'], ['0.5', '0.5', '0.5']);
    const error = (() => {
      try {
        parseAnnotationSheet(bad, 'ann-a', 'a.csv');
      } catch (e) {
        return e as InputError;
      }
      return null;
    })();
    expect(error?.message).toBe('a.csv:3: label: label "maybe" is not yes or no');
    expect(() => parseAnnotationSheet(fill(['yes', '', 'no'], ['1', '1', '1']), 'x', 'x.csv')).toThrow(/^x\.csv:3: label: missing label/);
    expect(() => parseAnnotationSheet(fill(['yes', 'no', 'no'], ['1', '1.5', '1']), 'x', 'x.csv')).toThrow(/^x\.csv:3: confidence: /);
    expect(() => parseAnnotationSheet('item_id,question\nq1,Q\n', 'x', 'x.csv')).toThrow(/missing column "label"/);
    expect(() => parseAnnotationSheet('item_id,label\nq1,yes\nq1,no\n', 'x', 'x.csv')).toThrow(/^x\.csv:3: item_id: item "q1" labeled twice/);
  });

  it('requires three different annotators who labeled every item', () => {
    const a = parseAnnotationSheet('item_id,label\nq1,yes\nq2,no\n', 'a', 'a.csv');
    const b = parseAnnotationSheet('item_id,label\nq1,yes\n', 'b', 'b.csv');
    const c = parseAnnotationSheet('item_id,label\nq1,no\nq2,no\n', 'c', 'c.csv');
    expect(() => aggregateAnnotations([a, b, c])).toThrow(/^a\.csv:3: item_id: item "q2" has no label from b/);
    expect(() => aggregateAnnotations([a, a, c])).toThrow(/three different annotators/);
    expect(() => aggregateAnnotations([a, c])).toThrow(/expected three/);
  });
});

describe('orthogonality items (App. B.2)', () => {
  it('pairs each question with personas of every persona category, reproducibly', () => {
    const personas = listStimuli(loadBuiltinPerturbations());
    const questions = [
      { id: 'q1', text: 'Should I?' },
      { id: 'q2', text: 'Is it worth it?' },
    ];
    const items = buildOrthogonalityItems(questions, personas, { perCategory: 2 });
    expect(items).toHaveLength(2 * 10 * 2);
    expect(buildOrthogonalityItems(questions, personas, { perCategory: 2 })).toEqual(items);
    expect(items.every((item) => /^q[12]\|[a-z_]+\.\d$/.test(item.id))).toBe(true);
    expect(items.some((item) => item.id.includes('filler') || item.id.includes('bereavement'))).toBe(false);
    const sheet = exportAnnotationSheet(items, 'orthogonality');
    expect(sheet.split('\r\n')).toHaveLength(items.length + 2);
    expect(() => buildOrthogonalityItems(questions, personas, { perCategory: 0 })).toThrow(/perCategory/);
  });
});
