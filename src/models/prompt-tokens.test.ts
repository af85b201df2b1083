import { describe, expect, it } from 'vitest';
import { countPromptTokens, primePromptTokens, promptTokens, promptText } from './prompt-tokens.js';
import { SimAdapter } from './sim-adapter.js';
import { countTokens } from './token-count.js';
import './sim-echo.js';
import type { ChatMessage } from './types.js';

const messages = (): ChatMessage[] => [
  { role: 'system', content: 'Label each step.' },
  { role: 'user', content: 'one two three '.repeat(5_000) },
];

describe('prompt tokens', () => {
  it('counts the contents joined by newlines, as a sim model reports them', async () => {
    const list = messages();
    expect(promptText(list)).toBe(`${list[0]!.content}\n${list[1]!.content}`);
    expect(countPromptTokens(list)).toBe(countTokens(promptText(list)));
    expect(await promptTokens(list)).toBe(countPromptTokens(list));
  });

  it('takes a primed count only for the very list, unchanged', async () => {
    const list = messages();
    const counted = countPromptTokens(list);
    // A wrong count primed on purpose shows which path answered.
    primePromptTokens(list, 7);
    expect(await promptTokens(list)).toBe(7);
    expect(await promptTokens(messages())).toBe(counted);
    list[1] = { role: 'user', content: `${list[1]!.content}more` };
    expect(await promptTokens(list)).toBe(countPromptTokens(list));
  });

  it('is what the sim adapter reports as input tokens, primed or counted', async () => {
    const adapter = new SimAdapter('sim:echo', 'echo');
    const list = messages();
    const request = { model: 'sim:echo', messages: list, params: {}, sample: 0 };
    const counted = (await adapter.generate(request)).usage.inputTokens;
    expect(counted).toBe(countPromptTokens(list));
    // The adapter takes a count primed on the request's message list (a copy of the request keeps the list).
    primePromptTokens(list, 7);
    expect((await adapter.generate({ ...request })).usage.inputTokens).toBe(7);
  });
});
