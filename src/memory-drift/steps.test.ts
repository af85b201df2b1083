import { describe, expect, it } from 'vitest';
import { extractNumberedSteps, extractSteps, extractTaggedSteps } from './steps.js';

describe('step extraction (docs/decisions.md#d7)', () => {
  it('reads <step_N> tags with closing tags stripped and the answer apart', () => {
    const text = '<think>\n<step_1> Weigh the cost. </step_1>\n<step_2>Think of the people.</step_2>\n</think>\n<answer>Do it.</answer>';
    expect(extractSteps(text)).toEqual({
      steps: ['Weigh the cost.', 'Think of the people.'],
      method: 'tags',
      source: 'text',
      answer: 'Do it.',
    });
  });

  it('keeps a final unterminated step and steps missing their closing tag', () => {
    expect(extractTaggedSteps('<step_1>First<step_2>Second\n</think><answer>x</answer>')).toEqual(['First', 'Second']);
    expect(extractTaggedSteps('<think><step_1>One</step_1><step_2>Two, cut off mid-sen')).toEqual(['One', 'Two, cut off mid-sen']);
    expect(extractTaggedSteps('<step1>a</step1><STEP_2>b</STEP_2><step 3>c</step 3>')).toEqual(['a', 'b', 'c']);
  });

  it('drops empty steps and text between a closing tag and the next step', () => {
    expect(extractTaggedSteps('<step_1>  </step_1> noise <step_2>Real</step_2> trailing')).toEqual(['Real']);
  });

  it('falls back to a numbered list (inside <think> when present)', () => {
    const text = '<think>Some intro.\n1. Compare options.\n2) Consider risk\n   over time.\nStep 3: Decide.</think><answer>A</answer>';
    expect(extractSteps(text)).toEqual({
      steps: ['Compare options.', 'Consider risk\n   over time.', 'Decide.'],
      method: 'numbered',
      source: 'text',
      answer: 'A',
    });
    expect(extractNumberedSteps('**1.** Bold one\n**2.** Bold two')).toEqual(['Bold one', 'Bold two']);
  });

  it('does not treat a stray number as a list', () => {
    expect(extractNumberedSteps('In 2. Not a list.\n3. Still not.')).toEqual([]);
    expect(extractSteps('1. Only one item.').method).toBe('sentences');
  });

  it('falls back to paragraphs, then sentences, and reports the method', () => {
    expect(extractSteps('First paragraph here.\n\nSecond one.\n \nThird.')).toMatchObject({
      steps: ['First paragraph here.', 'Second one.', 'Third.'],
      method: 'paragraphs',
      answer: null,
    });
    expect(extractSteps('It costs more. It lasts longer! Is that worth it?')).toMatchObject({
      steps: ['It costs more.', 'It lasts longer!', 'Is that worth it?'],
      method: 'sentences',
    });
    expect(extractSteps('   ')).toEqual({ steps: [], method: 'none', source: 'text', answer: null });
  });

  it('uses the text outside <answer> when there is no <think>', () => {
    expect(extractSteps('Risk first. Then cost.\n<answer>Buy it.</answer>')).toMatchObject({
      steps: ['Risk first.', 'Then cost.'],
      method: 'sentences',
      answer: 'Buy it.',
    });
  });

  it('uses a separate reasoning trace when the text has no step tags', () => {
    const result = extractSteps('You should rent.', { reasoning: '1. Prices are high.\n2. Mobility matters.' });
    expect(result).toEqual({
      steps: ['Prices are high.', 'Mobility matters.'],
      method: 'numbered',
      source: 'reasoning',
      answer: 'You should rent.',
    });
    expect(extractSteps('<step_1>Tagged</step_1>', { reasoning: 'ignored' }).source).toBe('text');
    expect(extractSteps('Text only.', { reasoning: 'Trace one. Trace two.', source: 'text' }).steps).toEqual(['Text only.']);
    expect(extractSteps('x', { reasoning: 'Trace one. Trace two.', source: 'reasoning' }).steps).toEqual(['Trace one.', 'Trace two.']);
    expect(extractSteps('Fallback text.', { reasoning: '  ' })).toMatchObject({ source: 'text', method: 'sentences' });
  });
});

describe('tagged steps (property)', () => {
  it('extracts exactly the trimmed non-empty contents of well-formed step tags', async () => {
    const fc = await import('fast-check');
    const content = fc.string({ unit: fc.constantFrom('a', 'B', ' ', '\n', '.', '1', 'é', '>'), minLength: 0, maxLength: 20 });
    fc.assert(
      fc.property(fc.array(content, { minLength: 1, maxLength: 8 }), fc.boolean(), (contents, closeLast) => {
        const body = contents.map((c, i) => `<step_${i + 1}>${c}${closeLast || i < contents.length - 1 ? `</step_${i + 1}>` : ''}`).join('\n');
        const text = `<think>\n${body}\n</think>\n<answer>ok</answer>`;
        expect(extractTaggedSteps(text)).toEqual(contents.map((c) => c.trim()).filter((c) => c !== ''));
      }),
      { numRuns: 300, seed: 7 },
    );
  });
});
