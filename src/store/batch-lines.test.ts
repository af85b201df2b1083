import { describe, expect, it } from 'vitest';
import type { BatchLineResult } from '../models/batch/index.js';
import { settleLines } from './batch-lines.js';

const ok = (customId: string, text: string): BatchLineResult => ({ customId, kind: 'succeeded', body: { text } });
const err = (customId: string): BatchLineResult => ({ customId, kind: 'errored', errorClass: 'server', message: 'boom' });

describe('settleLines', () => {
  it('keeps one line per cell, drops exact repeats and counts them', () => {
    const s = settleLines(['a', 'b'], [ok('a', 'x'), ok('b', 'y'), ok('a', 'x')], []);
    expect(s.verdictOf('a')).toEqual({ kind: 'line', line: ok('a', 'x') });
    expect(s.verdictOf('b')).toEqual({ kind: 'line', line: ok('b', 'y') });
    expect(s).toMatchObject({ duplicates: 1, conflicts: [], foreign: 0 });
  });

  it('never lets a later line win: two answers, or an answer and an error, are a conflict', () => {
    const s = settleLines(['a', 'b', 'c'], [ok('a', 'x'), ok('a', 'z'), ok('b', 'y'), err('b'), ok('c', 'w')], []);
    expect(s.verdictOf('a')).toMatchObject({ kind: 'conflict', reason: expect.stringMatching(/2 different succeeded lines/) });
    expect(s.verdictOf('b')).toMatchObject({ kind: 'conflict', reason: expect.stringMatching(/disagree \(succeeded, errored\)/) });
    expect(s.verdictOf('c').kind).toBe('line');
    expect(s.conflicts).toEqual(['a', 'b']);
  });

  it('names the unparseable line of a cell, blames an anonymous one on cells without a line, and ignores foreign lines', () => {
    const s = settleLines(
      ['a', 'b', 'c'],
      [ok('a', 'x'), ok('zzz', 'q')],
      [
        { source: 'file out', line: 2, customId: 'b' },
        { source: 'file out', line: 5 },
      ],
    );
    expect(s.verdictOf('a').kind).toBe('line');
    expect(s.verdictOf('b')).toEqual({ kind: 'unreadable', reason: "file out line 2 (this cell's result) is not JSON" });
    expect(s.verdictOf('c')).toEqual({ kind: 'unreadable', reason: 'no readable result; file out line 5 is not JSON' });
    expect(s.foreign).toBe(1);
    expect(settleLines(['a'], [], []).verdictOf('a')).toEqual({ kind: 'missing' });
  });
});
