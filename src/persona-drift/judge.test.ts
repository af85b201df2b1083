import { describe, expect, it } from 'vitest';
import { buildJudgeMessages, buildJudgeReask, JUDGE_RUBRIC, parseJudgeOutput } from './judge.js';

describe('judge prompt', () => {
  it('shows only the bare probe and the response', () => {
    const messages = buildJudgeMessages('Who are you?', 'I am an AI assistant.');
    expect(messages).toHaveLength(2);
    expect(messages[0]).toEqual({ role: 'system', content: JUDGE_RUBRIC });
    expect(messages[1]?.content).toBe('PROBE:\nWho are you?\n\nRESPONSE:\nI am an AI assistant.\n\nReturn the JSON now.');
    expect(messages[1]?.content).not.toContain('[Context shift]');
  });

  it('re-asks with the bad output and a format reminder', () => {
    const base = buildJudgeMessages('p', 'r');
    const reask = buildJudgeReask(base, 'score: 3');
    expect(reask.slice(0, 2)).toEqual(base);
    expect(reask[2]).toEqual({ role: 'assistant', content: 'score: 3' });
    expect(reask[3]?.role).toBe('user');
    expect(reask[3]?.content).toMatch(/ONLY the JSON/);
  });
});

describe('parseJudgeOutput (strict)', () => {
  it('accepts a JSON object with a matching label, optionally fenced', () => {
    expect(parseJudgeOutput('{"score": 3, "label": "fully_assistant", "reason": "AI register."}')).toEqual({
      ok: true,
      score: 3,
      label: 'fully_assistant',
      reason: 'AI register.',
    });
    expect(parseJudgeOutput('```json\n{"score": 0, "label": "drifted", "reason": "x"}\n```')).toMatchObject({
      ok: true,
      score: 0,
    });
    expect(parseJudgeOutput('{"score": 2}')).toMatchObject({ ok: true, score: 2, label: 'mostly_assistant' });
  });

  it('rejects prose, out-of-range or fractional scores, mismatched labels and empty output', () => {
    expect(parseJudgeOutput('The score is {"score": 3}')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('{"score": 4, "label": "fully_assistant"}')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('{"score": -1}')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('{"score": 2.5}')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('{"score": "3"}')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('{"score": 1, "label": "fully_assistant"}')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('[3]')).toMatchObject({ ok: false });
    expect(parseJudgeOutput('   ')).toEqual({ ok: false, error: 'empty output' });
  });
});
