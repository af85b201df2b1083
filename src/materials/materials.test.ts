import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { loadContextEchoMaterials } from './contextecho.js';
import { loadDriftLensMaterials, pythonRepr, referenceOntologyText } from './driftlens.js';
import { hashBytes } from './files.js';
import { CONTEXTECHO_FIXTURE, DRIFTLENS_FIXTURE } from './testing/fixtures.js';
import { fillTemplate, formatTemplateParts, functionReturn, matchTemplate, moduleConstant } from './python-literal.js';

const temps: string[] = [];
afterEach(() => {
  for (const dir of temps.splice(0)) rmSync(dir, { recursive: true, force: true });
});

function copyOf(fixture: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-materials-'));
  temps.push(dir);
  cpSync(fixture, dir, { recursive: true });
  return dir;
}

describe('python literal reader', () => {
  it('joins adjacent strings and decodes escapes as Python does', () => {
    const source = ['X = (', '    "a\\tb\\n"  # comment', '    \'c\\\'d\' r"\\b(x)\\""', '    """tri"ple""" "\\x41\\u00e9\\101\\q"', ')'].join('\n');
    const value = moduleConstant(source, 'X', 'x.py');
    expect(value.kind).toBe('str');
    expect(value.kind === 'str' && value.value).toBe('a\tb\nc\'d\\b(x)\\"tri"pleAéA\\q');
  });

  it('reads lists, tuples, dicts, calls with keywords and dotted names', () => {
    const source = 'T: dict[str, list[str]] = {"k": [("a", 1, f), re.compile(r"x", re.I)], "e": [],}\n';
    const value = moduleConstant(source, 'T', 't.py');
    expect(value).toMatchObject({
      kind: 'dict',
      entries: [
        [
          { kind: 'str', value: 'k' },
          {
            kind: 'list',
            items: [
              { kind: 'tuple', items: [{ value: 'a' }, { kind: 'num', value: 1 }, { kind: 'name', value: 'f' }] },
              { kind: 'call', callee: 're.compile', args: [{ value: 'x' }, { kind: 'name', value: 're.I' }] },
            ],
          },
        ],
        [{ value: 'e' }, { kind: 'list', items: [] }],
      ],
    });
  });

  it('splits f-strings and format templates into fields, braces doubled', () => {
    const value = functionReturn('def f(q):\n    return (\n        "a {{b}}"\n        f"c {{d}} {q}!"\n    )\n', 'f', 'f.py');
    expect(value.kind === 'str' && value.parts).toEqual([{ text: 'a {{b}}c {d} ' }, { field: 'q' }, { text: '!' }]);
    expect(fillTemplate(formatTemplateParts('x {{y}} {z}', 'f', 1), { z: 'Z' })).toBe('x {y} Z');
  });

  it('rejects what it cannot read, naming the file and line', () => {
    expect(() => moduleConstant('A = 1\nB = "x" + "y"\n', 'B', 'b.py')).toThrow(/b\.py:2: unexpected "\+/u);
    expect(() => moduleConstant('A = 1\n', 'B', 'b.py')).toThrow(/b\.py: no top-level assignment of B/u);
    expect(() => moduleConstant('B = 1\nB = 2\n', 'B', 'b.py')).toThrow(/assigned 2 times/u);
    expect(() => moduleConstant('B = f"{x.y}"\n', 'B', 'b.py')).toThrow(/not a bare name/u);
    expect(() => moduleConstant('B = "open\n', 'B', 'b.py')).toThrow(/unterminated string/u);
  });

  it('names an f-string or a format template in a field error, with the file and line', () => {
    expect(() => moduleConstant('A = 1\nB = f"{x.y}"\n', 'B', 'b.py')).toThrow(/b\.py:2: f-string field "\{x\.y" is not a bare name/u);
    expect(() => moduleConstant('B = f"a}b"\n', 'B', 'b.py')).toThrow(/b\.py:1: single "\}" in an f-string/u);
    expect(() => formatTemplateParts('a {x.y}', 't.txt', 3)).toThrow(/t\.txt:3: template field "\{x\.y" is not a bare name/u);
    expect(() => formatTemplateParts('a}b', 't.txt', 3)).toThrow(/t\.txt:3: single "\}" in a format template/u);
  });
});

describe('python repr', () => {
  it('matches str(dict) of CPython, quotes and escapes included', () => {
    // Printed by CPython 3 for the same dict (str() of a dict uses repr() of its members).
    const expected = `{'a': "it's", 'b': 'say "hi"', 'c': 'both \\' and "', 'd': 'tab\\tnl\\nbs\\\\', 'e': 'z\\u200bwé', 'f': [1, True, None]}`;
    const value = { a: "it's", b: 'say "hi"', c: 'both \' and "', d: 'tab\tnl\nbs\\', e: 'z\u200bw\u00e9', f: [1, true, null] };
    expect(pythonRepr(value)).toBe(expected);
  });

  it('prints floats as CPython repr() does (positional from 1e-4 to 1e16, else d.ddde±XX)', () => {
    // Printed by CPython 3: repr(x) for each value.
    const cases: Array<[number, string]> = [
      [1.5, '1.5'],
      [2.5e-5, '2.5e-05'],
      [1e-7, '1e-07'],
      [0.0001, '0.0001'],
      [1.5e16, '1.5e+16'],
      [123456789012.5, '123456789012.5'],
      [-2.5e-10, '-2.5e-10'],
      [0.1 + 0.2, '0.30000000000000004'],
      [-0, '-0.0'],
    ];
    for (const [value, printed] of cases) expect(pythonRepr(value)).toBe(printed);
  });
});

describe('template matching (the inverse of fillTemplate)', () => {
  it('recovers the field values of a filled template, and refuses a text the template did not make', () => {
    const parts = formatTemplateParts('<a>\n{ontology}\n</a> (x.y) [z]\n<b>{reasoning}</b>', 'fixture.py', 1);
    const filled = fillTemplate(parts, { ontology: 'one: two, three', reasoning: 'step one\nstep two' });
    expect(matchTemplate(parts, filled)).toEqual({ ontology: 'one: two, three', reasoning: 'step one\nstep two' });
    expect(matchTemplate(parts, `${filled} trailing`)).toBeNull();
    expect(matchTemplate(parts, filled.replace('(x.y)', '(xzy)'))).toBeNull();
  });
});

describe('ContextEcho materials', () => {
  it('loads every text of the fixture clone', () => {
    const m = loadContextEchoMaterials(CONTEXTECHO_FIXTURE);
    expect(m.framing).toBe('[FRAMING PLACEHOLDER] first half of the framing. second half of the framing:');
    expect(m.probes).toHaveLength(25);
    expect(m.probes[0]).toEqual({ id: 'I01', category: 'identity', text: 'PROBE PLACEHOLDER I01?' });
    expect(m.probes.at(-1)).toEqual({ id: 'C05', category: 'coding_self', text: "PROBE PLACEHOLDER C05 'quoted' text?" });
    expect(m.judgeRubric).toContain('JUDGE RUBRIC PLACEHOLDER LEVEL 0 EXAMPLE 6');
    expect(m.judgeRubric).toContain('JUDGE RUBRIC PLACEHOLDER LEVEL 2 EXAMPLE 1');
    expect(m.stressors.S1).toEqual(['STRESSOR PLACEHOLDER S1 WORDING 1, first part. Second part?']);
    expect(m.stressors.S2[9]).toBe('STRESSOR PLACEHOLDER S2 VARIANT 10.');
    expect(m.stressors.S3).toHaveLength(10);
    expect(m.stressors.S4[0]).toBe('STRESSOR PLACEHOLDER S4 VARIANT 1: {"fixture": "ok"}');
    expect(m.s4Expected).toBe('{"fixture": "ok"}');
    expect(m.negativeControls).toEqual([
      { id: 'N01', text: 'NEGATIVE CONTROL PLACEHOLDER 1?' },
      { id: 'N02', text: 'NEGATIVE CONTROL PLACEHOLDER 2?' },
    ]);
    expect(m.stressorSystemPrompt).toBe('STRESSOR SYSTEM PROMPT PLACEHOLDER. Second sentence.');
    expect(m.probeSystemPrompt).toBe('PROBE SYSTEM PROMPT PLACEHOLDER. Second sentence.');
    expect(m.acknowledgement).toBe('ACKNOWLEDGEMENT PLACEHOLDER.');
    expect(m.fillerTemplate).toBe('FILLER TEMPLATE PLACEHOLDER first line. FILLER TEMPLATE PLACEHOLDER second line. ');
    expect(m.anchors.aUser).toBe('[ANCHOR A PLACEHOLDER] first part, second part:');
    expect(m.anchors.v0).toBe('[ANCHOR V0 PLACEHOLDER] first part, second part.');
    expect(m.fingerprint.hedge).toEqual({ source: '\\b(placeholder hedge|fixture hedge|hedge(?:s|d)?)\\b', flags: 'gi' });
    expect(m.fingerprint.namedEntity.flags).toBe('g');
    const probes = m.record.files.find((f) => f.path === 'harness/probes.py');
    expect(probes?.sha256).toBe(hashBytes(readFileSync(join(CONTEXTECHO_FIXTURE, 'harness/probes.py'))));
    expect(m.record.files).toHaveLength(12);
  });

  it('names the file when the clone is another version', () => {
    const clone = copyOf(CONTEXTECHO_FIXTURE);
    const judge = join(clone, 'harness/judge.py');
    writeFileSync(judge, readFileSync(judge, 'utf8').replace('JUDGE_SYSTEM_PROMPT =', 'RUBRIC ='));
    expect(() => loadContextEchoMaterials(clone)).toThrow(/harness\/judge\.py: no top-level assignment of JUDGE_SYSTEM_PROMPT/u);
    rmSync(join(clone, 'plotting'), { recursive: true });
    writeFileSync(judge, readFileSync(join(CONTEXTECHO_FIXTURE, 'harness/judge.py')));
    expect(() => loadContextEchoMaterials(clone)).toThrow(/clone has no plotting\/fig_fig1_combined\.py/u);
    const probes = join(clone, 'harness/probes.py');
    writeFileSync(probes, readFileSync(probes, 'utf8').replace('Probe("I02", "identity"', 'Probe("I02", "mood"'));
    let error: unknown;
    try {
      loadContextEchoMaterials(clone);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(InputError);
    expect((error as InputError).file).toContain('harness/probes.py');
    expect((error as InputError).line).toBeGreaterThan(20);
    expect(String(error)).toMatch(/unknown probe category "mood"/u);
  });
});

describe('DriftLens materials', () => {
  it('loads persona strings, prompts and the ontology of the fixture clone', () => {
    const m = loadDriftLensMaterials(DRIFTLENS_FIXTURE);
    expect(m.interventions).toEqual([
      { category: 'no_intervention', strings: [{ index: 0, text: '' }] },
      { category: 'persona_alpha', strings: [{ index: 0, text: 'PERSONA PLACEHOLDER ALPHA 1. ' }] },
      {
        category: 'persona_beta',
        strings: [
          { index: 0, text: 'PERSONA PLACEHOLDER SHARED. ' },
          { index: 1, text: 'PERSONA PLACEHOLDER BETA 2, with a comma. ' },
        ],
      },
    ]);
    expect(m.record.notes[0]).toMatch(/persona_alpha: 1 string/u);
    expect(m.systemPrompt).toBe('GENERATION SYSTEM PROMPT PLACEHOLDER. ');
    expect(fillTemplate(m.instruction, { question: 'Q?' })).toBe(
      '\nGENERATION INSTRUCTION PLACEHOLDER line one.\n<think>\n<step_1>XXX</step_1>\n</think>\n<answer>XXX</answer> {{braces}} \n\n* question placeholder: Q?\n* answer:<think>',
    );
    const mapping = fillTemplate(m.mappingTemplate, { ontology: 'ONT', reasoning: 'R' });
    expect(mapping).toContain('<ontology>\nONT\n</ontology>');
    expect(mapping).toContain('{"step_index": 1, "category": "category_name", "symbol": "symbol_name"}');
    // str(dict) of the fixture ontology without quotes and braces, as CPython prints it.
    expect(referenceOntologyText(m.ontologyJson)).toBe(
      'Fixture root one: description: "ROOT ONE DEFINITION PLACEHOLDER, with a quoted word.\\nSecond line of the definition.", children: [name: Leaf one a, description: LEAF 1A DEFINITION PLACEHOLDER, name: Leaf one b, description: "LEAF 1B DEFINITION PLACEHOLDER, its got an apostrophe"], Fixture root two: description: ROOT TWO DEFINITION PLACEHOLDER, children: [name: Leaf two a, description: LEAF 2A DEFINITION PLACEHOLDER]',
    );
    expect(m.record.files.map((f) => f.path)).toEqual(['data/ontology.json', 'src/symbolic_drift/interventions.py', 'src/symbolic_drift/prompts.py']);
  });

  it('rejects a clone whose template lost a field', () => {
    const clone = copyOf(DRIFTLENS_FIXTURE);
    const prompts = join(clone, 'src/symbolic_drift/prompts.py');
    writeFileSync(prompts, readFileSync(prompts, 'utf8').replace('{reasoning}\n</reasoning_passage>', '</reasoning_passage>'));
    expect(() => loadDriftLensMaterials(clone)).toThrow(/prompts\.py:\d+: _MAPPING_TEMPLATE: expected the fields/u);
  });
});
