import { describe, expect, it } from 'vitest';
import { checkExactJson, checkNoPreamble, checkOneSentence, checkYesNo, runStressorChecker } from './checkers.js';
import { checkContract, type ContractSpec } from './contracts.js';
import { loadPersonaStimuli } from './stimuli.js';

describe('stressor checkers (reference semantics)', () => {
  it('S1 accepts exactly yes/no with trailing punctuation', () => {
    expect(checkYesNo('Yes')).toEqual({ pass: true, reason: 'ok' });
    expect(checkYesNo('  no. ')).toEqual({ pass: true, reason: 'ok' });
    expect(checkYesNo('NO!')).toEqual({ pass: true, reason: 'ok' });
    expect(checkYesNo('Yes, it is')).toEqual({ pass: false, reason: 'extra-text' });
    expect(checkYesNo('maybe')).toEqual({ pass: false, reason: 'not-yes-no' });
    expect(checkYesNo('   ')).toEqual({ pass: false, reason: 'empty' });
  });

  it('S2 is_no_preamble: one line, no fence, no preamble opening', () => {
    expect(checkNoPreamble('ls -la')).toMatchObject({ pass: true });
    expect(checkNoPreamble('git status && npm test')).toMatchObject({ pass: true });
    expect(checkNoPreamble('```bash\nls\n```')).toEqual({ pass: false, reason: 'fenced' });
    expect(checkNoPreamble('ls\nls -la')).toEqual({ pass: false, reason: 'multi-line' });
    expect(checkNoPreamble("I'll run ls")).toEqual({ pass: false, reason: 'preamble' });
    expect(checkNoPreamble('Here is the command: ls')).toEqual({ pass: false, reason: 'preamble' });
    expect(checkNoPreamble('The command is ls')).toEqual({ pass: false, reason: 'preamble' });
    expect(checkNoPreamble('')).toEqual({ pass: false, reason: 'empty' });
    // Like the reference, single backticks on one line are not rejected.
    expect(checkNoPreamble('`ls`')).toMatchObject({ pass: true });
  });

  it('S3 one sentence', () => {
    expect(checkOneSentence('I would re-run the failing test.')).toMatchObject({ pass: true });
    expect(checkOneSentence('Run the test. Then fix it.')).toEqual({ pass: false, reason: 'multiple-sentences' });
    expect(checkOneSentence('- run the test')).toEqual({ pass: false, reason: 'list' });
    expect(checkOneSentence('```\nx\n```')).toEqual({ pass: false, reason: 'fenced' });
  });

  it('S4 byte-exact JSON', () => {
    expect(checkExactJson('{"status": "ok"}\n')).toMatchObject({ pass: true });
    expect(checkExactJson('{"status":"ok"}')).toEqual({ pass: false, reason: 'not-exact' });
    expect(checkExactJson('```json\n{"status": "ok"}\n```')).toEqual({ pass: false, reason: 'fenced' });
    expect(runStressorChecker('exact_json', '{"status": "ok"}')).toMatchObject({ pass: true });
  });

  it('runStressorChecker sends each stressor kind to its own checker, the expected output to S4 only', () => {
    expect(runStressorChecker('yes_no', 'maybe')).toEqual({ pass: false, reason: 'not-yes-no' });
    expect(runStressorChecker('no_preamble', 'ls\nls -la')).toEqual({ pass: false, reason: 'multi-line' });
    expect(runStressorChecker('one_sentence', '- run the test')).toEqual({ pass: false, reason: 'list' });
    expect(runStressorChecker('exact_json', '{"a": 1}', '{"a": 1}')).toEqual({ pass: true, reason: 'ok' });
    expect(runStressorChecker('exact_json', '{"status": "ok"}', '{"a": 1}')).toEqual({ pass: false, reason: 'not-exact' });
    expect(runStressorChecker('yes_no', 'no', 'ignored')).toEqual({ pass: true, reason: 'ok' });
  });
});

describe('hardened contracts (strict, docs/decisions.md#d19)', () => {
  const contracts = new Map(loadPersonaStimuli().contracts.map((c) => [c.id, c as ContractSpec]));
  const get = (id: string) => contracts.get(id) as ContractSpec;

  it('every expected output passes its own checker, and fenced-but-correct fails as fenced', () => {
    for (const contract of contracts.values()) {
      expect(checkContract(contract, contract.expected)).toEqual({ pass: true, reason: 'ok' });
      expect(checkContract(contract, `${contract.expected}\r\n`)).toEqual({ pass: true, reason: 'ok' });
      expect(checkContract(contract, `\`\`\`\n${contract.expected}\n\`\`\``)).toEqual({
        pass: false,
        reason: 'fenced',
        fencedCorrect: true,
      });
    }
  });

  it('C1_csv diagnoses header, row count, order and quoting', () => {
    const c1 = get('C1_csv');
    const lines = c1.expected.split('\n');
    expect(checkContract(c1, ['ID,tool,language,year', ...lines.slice(1)].join('\n')).reason).toBe('header');
    expect(checkContract(c1, lines.slice(0, 6).join('\n')).reason).toBe('row-count');
    expect(checkContract(c1, [lines[0], ...lines.slice(1).reverse()].join('\n')).reason).toBe('order');
    expect(checkContract(c1, lines.map((l) => l.replace('grep', '"grep"')).join('\n')).reason).toBe('quoted');
    expect(checkContract(c1, `Here is the CSV:\n${c1.expected}`).reason).toBe('extra-text');
    expect(checkContract(c1, '```csv\nid,tool\n```')).toEqual({ pass: false, reason: 'fenced', fencedCorrect: false });
  });

  it('C2_yaml diagnoses order, quoting and keys', () => {
    const c2 = get('C2_yaml');
    expect(checkContract(c2, 'version: 2.4.1\nname: echolens\nlicense: Apache-2.0').reason).toBe('order');
    expect(checkContract(c2, 'name: "echolens"\nversion: 2.4.1\nlicense: Apache-2.0').reason).toBe('quoted');
    expect(checkContract(c2, 'name: echolens\nversion: 2.4.1').reason).toBe('keys');
    expect(checkContract(c2, 'name: echolens\nversion: 2.4.2\nlicense: Apache-2.0').reason).toBe('value');
    expect(checkContract(c2, '- not\n- a mapping').reason).toBe('parse');
  });

  it('C5_echo diagnoses count, order and case', () => {
    const c5 = get('C5_echo');
    const words = c5.expected.split('\n');
    expect(checkContract(c5, words.slice(0, 9).join('\n')).reason).toBe('count');
    expect(checkContract(c5, [...words].reverse().join('\n')).reason).toBe('order');
    expect(checkContract(c5, words.map((w) => w.toLowerCase()).join('\n')).reason).toBe('case');
  });

  it('C6_json parses the whole output, requires alphabetical key order and exact values', () => {
    const c6 = get('C6_json');
    expect(checkContract(c6, '{\n  "branch": "main",\n  "commit": "a1b2c3d",\n  "passed": true,\n  "tests": 42\n}')).toMatchObject({
      pass: true,
    });
    expect(checkContract(c6, '{"tests": 42, "branch": "main", "commit": "a1b2c3d", "passed": true}').reason).toBe('order');
    expect(checkContract(c6, '{"branch": "main", "commit": "a1b2c3d", "passed": "true", "tests": 42}').reason).toBe('value');
    expect(checkContract(c6, '{"branch": "main", "commit": "a1b2c3d", "passed": true}').reason).toBe('keys');
    expect(checkContract(c6, `Sure: ${c6.expected}`).reason).toBe('extra-text');
    expect(checkContract(c6, 'not json').reason).toBe('parse');
  });
});
