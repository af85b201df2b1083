import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { buildGenerationMessages, GENERATION_INSTRUCTION, GENERATION_SYSTEM_PROMPT, MEMORY_TOOL_CALL, SYSTEM_MEMORY_HEADER } from './messages.js';

const Q = 'Should I lend money to a friend?';

describe('buildGenerationMessages', () => {
  it('prepend (default): one memory line right before the question', () => {
    expect(buildGenerationMessages(Q, 'I am a nurse.')).toEqual([
      { role: 'system', content: GENERATION_SYSTEM_PROMPT },
      { role: 'user', content: `${GENERATION_INSTRUCTION}\n\nQuestion:\nI am a nurse.\n${Q}` },
    ]);
  });

  it('keeps whitespace-only noise verbatim as its own line', () => {
    const [, user] = buildGenerationMessages(Q, { text: '\t\t' }, 'prepend');
    expect(user!.content.endsWith(`Question:\n\t\t\n${Q}`)).toBe(true);
  });

  it('system: a memory block in the system prompt, the question alone in the user turn', () => {
    const messages = buildGenerationMessages(Q, 'I am a nurse.', 'system');
    expect(messages).toEqual([
      { role: 'system', content: `${GENERATION_SYSTEM_PROMPT}\n\n${SYSTEM_MEMORY_HEADER}\nI am a nurse.` },
      { role: 'user', content: `${GENERATION_INSTRUCTION}\n\nQuestion:\n${Q}` },
    ]);
    expect(buildGenerationMessages(Q, 'I am a nurse.', 'system', { systemPrompt: null })[0]!.content).toBe(`${SYSTEM_MEMORY_HEADER}\nI am a nurse.`);
  });

  it('memory-tool: user question, assistant lookup, user turn with the memory result', () => {
    const messages = buildGenerationMessages(Q, 'I am a nurse.', 'memory-tool');
    expect(messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user']);
    expect(messages[2]!.content).toBe(MEMORY_TOOL_CALL);
    expect(messages[3]!.content).toBe(
      '<memory_result path="/memories/user.md">\nI am a nurse.\n</memory_result>\nNow answer the question above in the required format.',
    );
  });

  it('an empty perturbation gives the same plain messages in every mode (one shared reference cell)', () => {
    const plain = buildGenerationMessages(Q, '', 'prepend');
    expect(buildGenerationMessages(Q, null, 'system')).toEqual(plain);
    expect(buildGenerationMessages(Q, { text: '' }, 'memory-tool')).toEqual(plain);
    expect(buildGenerationMessages(Q, '', 'prepend', { systemPrompt: null })).toEqual([plain[1]]);
  });

  it('rejects multi-line memories, empty questions and unknown modes', () => {
    expect(() => buildGenerationMessages(Q, 'a\nb')).toThrow(InvalidArgumentError);
    expect(() => buildGenerationMessages('  ', 'a')).toThrow(/question/);
    expect(() => buildGenerationMessages(Q, 'a', 'tool' as never)).toThrow(/mode/);
  });

  it('the instruction asks for the <think><step_N>…</think><answer> format', () => {
    expect(GENERATION_INSTRUCTION).toContain('<step_1>…</step_1>');
    expect(GENERATION_INSTRUCTION).toMatch(/<think>[\s\S]*<\/think>\n<answer>…<\/answer>/);
  });
});
