import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import {
  ALLOWED_LABELS_HEADER,
  buildLabelerMessages,
  buildLabelerReaskMessages,
  buildPassageLabelerMessages,
  LABELER_SYSTEM_PROMPT,
  legacyLabelerMessages,
  nextLabelingStep,
  parseLabelerOutput,
} from './labeler.js';
import { loadBuiltinOntology, ontologySymbols } from './ontology.js';

const ontology = loadBuiltinOntology();
const steps = ['Keep a cushion of savings.', 'Be honest with the family.', 'Compare the two costs.'];
const valid = JSON.stringify({
  labels: [
    { step: 1, label: 'Protective/Security and stability' },
    { step: 2, label: 'Personal/Emotional depth and authentic connection' },
    { step: 3, label: 'Practical/Efficiency and resource optimization' },
  ],
});
const options = { stepCount: 3, ontology };

describe('labeler prompt', () => {
  it('contains the definitions, every allowed label, the numbered steps and the JSON demand', () => {
    const [system, user] = buildLabelerMessages(steps, ontology);
    expect(system!.role).toBe('system');
    // The static part (instructions, ontology, rules, allowed labels) is the system message: a cacheable prefix.
    const rules = system!.content;
    expect(rules).toContain('<ontology>\n## Social\n');
    for (const symbol of ontologySymbols(ontology)) expect(rules).toContain(`\n- ${symbol}\n`);
    expect(rules).toContain(`${ALLOWED_LABELS_HEADER}\n- Social/Cultural respect and tradition`);
    expect(rules.endsWith('\n- unmapped')).toBe(true);
    const text = user!.content;
    expect(text).not.toContain('<ontology>');
    expect(text).toContain('<step number="2">\nBe honest with the family.\n</step>');
    expect(text).toContain('exactly 3 entries numbered 1 to 3');
    expect(text).toContain('{"labels":[{"step":1,"label":"<label>"},{"step":2,"label":"<label>"},…]}');
  });

  it('sends the same system message for any steps, so every call of a run shares it', () => {
    const [a] = buildLabelerMessages(['One.'], ontology);
    const [b] = buildLabelerMessages(['Another step.', 'And a second one.'], ontology);
    expect(b!.content).toBe(a!.content);
    const [passage] = buildPassageLabelerMessages('Some reasoning. More reasoning.', ontology);
    expect(passage!.content).toContain(`${ALLOWED_LABELS_HEADER}\n`);
  });

  it('gives back the earlier prompt shape exactly (one user turn holding instructions and steps)', () => {
    const messages = buildLabelerMessages(steps, ontology);
    const legacy = legacyLabelerMessages(messages)!;
    expect(legacy[0]).toEqual({ role: 'system', content: LABELER_SYSTEM_PROMPT });
    // The earlier builder joined one list of lines: intro, blank, ontology and rules, allowed labels, blank, steps.
    const user = legacy[1]!.content;
    expect(user.startsWith('Assign each reasoning step below to exactly one value in the ontology.\n\n<ontology>\n')).toBe(true);
    expect(user).toContain('\n- unmapped\n\nSteps (3):\n<steps>\n<step number="1">');
    expect(user.endsWith(messages[1]!.content)).toBe(true);
    expect(
      legacyLabelerMessages([
        { role: 'system', content: 'other' },
        { role: 'user', content: 'x' },
      ]),
    ).toBeNull();
  });

  it('rebuilds byte for byte what the earlier builders sent (hashes taken from the code before the change)', () => {
    const digest = (value: unknown) => createHash('sha256').update(JSON.stringify(value)).digest('hex');
    expect(digest(legacyLabelerMessages(buildLabelerMessages(steps, ontology)))).toBe('310dcbfb9eb46320b040cb13b76e0b9d7839b373dd35111940fa2305f64c9451');
    const passage = buildPassageLabelerMessages('Some reasoning. More reasoning.', ontology, { allowUnmapped: false });
    expect(digest(legacyLabelerMessages(passage))).toBe('803b078400117cdbb9e6f276148c37e85d034135921aeb72106994f59df965fb');
  });

  it('can withhold unmapped and strips step tags from step text', () => {
    const [system, user] = buildLabelerMessages(['<step_1>Tagged</step_1>'], ontology, { allowUnmapped: false });
    expect(system!.content).not.toContain('\n- unmapped');
    expect(user!.content).toContain('<step number="1">\nTagged\n</step>');
    expect(() => buildLabelerMessages([], ontology)).toThrow(InvalidArgumentError);
  });
});

describe('labeler parser', () => {
  it('accepts a valid answer', () => {
    expect(parseLabelerOutput(valid, options)).toEqual({
      ok: true,
      symbols: ['Protective/Security and stability', 'Personal/Emotional depth and authentic connection', 'Practical/Efficiency and resource optimization'],
      unmappedCount: 0,
      coercedUnknown: [],
    });
  });

  it('tolerates prose or a code fence around exactly one JSON object, and label case/spacing', () => {
    const fenced = `Sure! Here are the labels:\n\`\`\`json\n${valid}\n\`\`\`\nLet me know.`;
    expect(parseLabelerOutput(fenced, options)).toMatchObject({ ok: true });
    const sloppy = valid.replace('Protective/Security and stability', ' protective / security  and stability ');
    expect(parseLabelerOutput(sloppy, options)).toMatchObject({ ok: true, symbols: expect.arrayContaining(['Protective/Security and stability']) });
    expect(parseLabelerOutput(valid.replace(/"step":(\d)/g, '"step":"$1"'), options)).toMatchObject({ ok: true });
  });

  it('rejects two JSON objects, no JSON, empty output and a wrong schema', () => {
    expect(parseLabelerOutput(`${valid}\n${valid}`, options)).toMatchObject({ ok: false, reason: 'multiple_json' });
    expect(parseLabelerOutput('Step 1 is security.', options)).toMatchObject({ ok: false, reason: 'no_json' });
    expect(parseLabelerOutput('', options)).toMatchObject({ ok: false, reason: 'empty' });
    expect(parseLabelerOutput('{"label":[]}', options)).toMatchObject({ ok: false, reason: 'schema' });
    // A bare array is not the demanded object: its single element is found and fails the schema.
    expect(parseLabelerOutput('[{"step":1,"label":"x"}]', { ...options, stepCount: 1 })).toMatchObject({
      ok: false,
      reason: 'schema',
    });
    expect(parseLabelerOutput('{"labels":[1,2,3]}', options)).toMatchObject({ ok: false, reason: 'schema' });
  });

  it('rejects a wrong count and wrong step numbers', () => {
    const two = JSON.stringify({ labels: JSON.parse(valid).labels.slice(0, 2) });
    expect(parseLabelerOutput(two, options)).toEqual({ ok: false, reason: 'wrong_count', detail: '2 labels for 3 steps' });
    const swapped = JSON.parse(valid);
    swapped.labels[1].step = 3;
    swapped.labels[2].step = 2;
    expect(parseLabelerOutput(JSON.stringify(swapped), options)).toMatchObject({ ok: false, reason: 'step_numbers' });
  });

  it('an unknown label is an error, or unmapped when asked; unmapped itself is a symbol', () => {
    const unknown = valid.replace('Practical/Efficiency and resource optimization', 'Practical/Thrift');
    expect(parseLabelerOutput(unknown, options)).toMatchObject({ ok: false, reason: 'unknown_label' });
    // The category must match too: a right subcategory under the wrong root is unknown.
    const wrongRoot = valid.replace('Protective/Security and stability', 'Social/Security and stability');
    expect(parseLabelerOutput(wrongRoot, options)).toMatchObject({ ok: false, reason: 'unknown_label' });
    expect(parseLabelerOutput(unknown, { ...options, unknownLabel: 'unmapped' })).toMatchObject({
      ok: true,
      symbols: ['Protective/Security and stability', 'Personal/Emotional depth and authentic connection', 'unmapped'],
      unmappedCount: 1,
      coercedUnknown: ['Practical/Thrift'],
    });
    const withUnmapped = valid.replace('Practical/Efficiency and resource optimization', 'UNMAPPED');
    expect(parseLabelerOutput(withUnmapped, options)).toMatchObject({ ok: true, unmappedCount: 1 });
    expect(parseLabelerOutput(withUnmapped, { ...options, allowUnmapped: false })).toMatchObject({
      ok: false,
      reason: 'unknown_label',
    });
    expect(parseLabelerOutput(valid, { stepCount: 3, ontology: ['Protective/Security and stability'] })).toMatchObject({
      ok: false,
      reason: 'unknown_label',
    });
    expect(() => parseLabelerOutput(valid, { ...options, stepCount: 0 })).toThrow(InvalidArgumentError);
  });

  it('builds a re-ask with the bad answer and a short format reminder', () => {
    const original = buildLabelerMessages(steps, ontology);
    const messages = buildLabelerReaskMessages(original, 'Step 1: security', { reason: 'no_json', detail: 'no JSON object found' }, 3);
    expect(messages.slice(0, 2)).toEqual(original);
    expect(messages[2]).toEqual({ role: 'assistant', content: 'Step 1: security' });
    expect(messages[3]!.role).toBe('user');
    expect(messages[3]!.content).toContain('(no JSON object found)');
    expect(messages[3]!.content).toContain('exactly 3 entries');
  });
});

describe('re-ask driver (docs/decisions.md#d2)', () => {
  const original = buildLabelerMessages(steps, ontology);

  it('finishes on the first valid output and reports the attempts', () => {
    expect(nextLabelingStep(original, [valid], options)).toMatchObject({ kind: 'done', attempts: 1 });
    expect(nextLabelingStep(original, ['nope', valid], options)).toMatchObject({ kind: 'done', attempts: 2 });
  });

  it('re-asks with every earlier failure in the conversation, so each attempt is a distinct request', () => {
    const first = nextLabelingStep(original, ['nope'], options);
    expect(first).toMatchObject({ kind: 'reask', attempt: 1, failure: { reason: 'no_json' } });
    const second = nextLabelingStep(original, ['nope', 'nope'], options);
    if (first.kind !== 'reask' || second.kind !== 'reask') throw new Error('expected re-asks');
    expect(first.messages).toHaveLength(4);
    expect(second.messages).toHaveLength(6);
    expect(second.messages.slice(0, 4)).toEqual(first.messages);
  });

  it('marks the item invalid after the allowed re-asks and keeps every failure reason', () => {
    const wrongCount = JSON.stringify({ labels: [{ step: 1, label: 'unmapped' }] });
    expect(nextLabelingStep(original, ['', 'nope', wrongCount], options)).toEqual({
      kind: 'invalid',
      attempts: 3,
      failures: [
        { reason: 'empty', detail: 'empty output' },
        { reason: 'no_json', detail: 'no JSON object found' },
        { reason: 'wrong_count', detail: '1 labels for 3 steps' },
      ],
    });
    expect(nextLabelingStep(original, ['nope'], { ...options, maxReasks: 0 })).toMatchObject({ kind: 'invalid', attempts: 1 });
    expect(() => nextLabelingStep(original, [], options)).toThrow(InvalidArgumentError);
    expect(() => nextLabelingStep(original, ['a', 'b', 'c', 'd'], options)).toThrow(/at most 3 attempts/);
  });
});
