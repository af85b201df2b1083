import { describe, expect, it } from 'vitest';
import { argumentFidelity, commandScore, flatten, normalisePath, pathScore, scoreAnswer, shellTokens, textScore } from './scoring.js';

describe('argument fidelity', () => {
  it('paths: exact or normalised equal → 1, a relative tail of an absolute path → 1, same file name → 0.5, else 0', () => {
    expect(normalisePath('./src//a/../b.ts')).toBe('src/b.ts');
    expect(pathScore('/app/src/a.ts', '/app/src/a.ts')).toBe(1);
    expect(pathScore('/app/src/./a.ts', '/app/src/a.ts')).toBe(1);
    expect(pathScore('/app/src/a.ts', 'src/a.ts')).toBe(1);
    expect(pathScore('/app/src/a.ts', '/app/test/a.ts')).toBe(0.5);
    expect(pathScore('/app/src/a.ts', '/app/src/b.ts')).toBe(0);
  });

  it('commands: whitespace-normalised equality, else Jaccard of shell tokens', () => {
    expect(commandScore('npm  test', ' npm test')).toBe(1);
    expect(shellTokens(`grep -n "a b" src | head`)).toEqual(['grep', '-n', 'a b', 'src', '|', 'head']);
    // {npm, test, --, -t, x} vs {npm, test}: 2 shared of 5.
    expect(commandScore('npm test -- -t x', 'npm test')).toBeCloseTo(2 / 5, 12);
  });

  it('free text: word-token Jaccard, case-insensitive', () => {
    expect(textScore('Run the tests', 'run THE tests')).toBe(1);
    expect(textScore('fix the parser', 'fix the lexer')).toBeCloseTo(2 / 4, 12);
  });

  it('averages over the union of flattened argument paths; a path only one side has scores 0', () => {
    expect([...flatten({ a: { b: 1 }, c: [1, 'x'] }).keys()]).toEqual(['a.b', 'c.0', 'c.1']);
    const r = argumentFidelity({ file_path: '/a/b.ts', limit: 20 }, { file_path: '/a/b.ts', offset: 3 });
    expect(r.fidelity).toBeCloseTo(1 / 3, 12);
    expect(r.arguments.map((a) => [a.path, a.kind, a.score])).toEqual([
      ['file_path', 'path', 1],
      ['limit', 'absent', 0],
      ['offset', 'absent', 0],
    ]);
    expect(argumentFidelity({}, {}).fidelity).toBe(1);
    // A Codex argv list is one command.
    expect(argumentFidelity({ command: ['bash', '-lc', 'make test'] }, { command: ['bash', '-lc', 'make  test'] }).fidelity).toBe(1);
    // A string input (apply_patch) is compared as text under `input`.
    expect(argumentFidelity('*** Begin Patch', { input: '*** Begin Patch' }).fidelity).toBe(1);
  });

  it('statuses: call, wrong tool (fidelity 0), unparseable, prose, missing; extra calls counted', () => {
    const truth = { name: 'Read', input: { file_path: '/a.ts' } };
    expect(scoreAnswer(truth, { text: '', toolCalls: [{ name: 'Read', input: { file_path: '/a.ts' } }] })).toMatchObject({
      status: 'call',
      fidelity: 1,
      nameMatch: true,
    });
    expect(scoreAnswer(truth, { text: '', toolCalls: [{ name: 'Bash', input: { command: 'cat /a.ts' } }] })).toMatchObject({
      status: 'call',
      fidelity: 0,
      nameMatch: false,
    });
    expect(scoreAnswer(truth, { text: '', toolCalls: [{ name: 'Read', input: '{"file', invalid: 'unparseable' }] })).toMatchObject({
      status: 'unparseable',
      fidelity: null,
    });
    expect(scoreAnswer(truth, { text: 'I would read it.' })).toMatchObject({ status: 'prose', fidelity: null });
    expect(scoreAnswer(truth, { text: '  ' })).toMatchObject({ status: 'missing' });
    expect(scoreAnswer(truth, null)).toMatchObject({ status: 'missing' });
    const two = scoreAnswer(truth, {
      text: '',
      toolCalls: [
        { name: 'Read', input: { file_path: '/a.ts' } },
        { name: 'Read', input: {} },
      ],
    });
    expect(two.extraCalls).toBe(1);
    expect(two.fidelity).toBe(1);
  });
});
