import { describe, expect, it } from 'vitest';
import { canonicalRequest, cellIdentity, cellKey, contentKey } from '../store/keys.js';
import { createAdapter } from './create-adapter.js';
import { GENEROUS_TIMEOUTS, useFakeProviders } from './testing/harness.js';
import type { ModelRequest, ToolDefinition } from './types.js';

const KEY = 'sk-test-SECRET-0123456789';
const ENV = { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY };

const READ: ToolDefinition = {
  name: 'Read',
  description: 'Read a file',
  inputSchema: { type: 'object', properties: { file_path: { type: 'string' } }, required: ['file_path'] },
};

function request(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    messages: [{ role: 'user', content: 'Open the config.' }],
    params: { temperature: 0, maxTokens: 64 },
    sample: 0,
    tools: [READ],
    toolChoice: 'auto',
    ...extra,
  };
}

const fakes = useFakeProviders(KEY);

describe('tool calling through the AI SDK adapter', () => {
  for (const stream of [false, true]) {
    it(`openai: sends tools / tool_choice and reads tool_calls (${stream ? 'stream' : 'json'})`, async () => {
      fakes.openai.setRespond({ toolCalls: [{ name: 'Read', arguments: { file_path: '/app/config.ts' } }] });
      const ref = `openai:gpt-4.1-mini@${fakes.openai.baseURL}`;
      const response = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS, stream }).generate(request(ref));
      const body = fakes.openai.requests.at(-1)!.body!;
      const tools = body.tools as Array<{ type: string; function: { name: string; description: string; parameters: unknown } }>;
      expect(tools.map((t) => [t.type, t.function.name, t.function.description, t.function.parameters])).toEqual([
        ['function', 'Read', 'Read a file', READ.inputSchema],
      ]);
      expect(body.tool_choice).toBe('auto');
      expect(response.toolCalls).toHaveLength(1);
      expect(response.toolCalls![0]).toMatchObject({ name: 'Read', input: { file_path: '/app/config.ts' } });
      expect(response.toolCalls![0]!.invalid).toBeUndefined();
      expect(response.finishReason).toBe('tool-calls');
    });

    it(`anthropic: sends tools and reads tool_use blocks (${stream ? 'stream' : 'json'})`, async () => {
      fakes.anthropic.setRespond({ text: 'Reading it.', toolCalls: [{ name: 'Read', arguments: { file_path: 'src/a.ts' } }] });
      const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
      const response = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS, stream }).generate(request(ref, { toolChoice: 'required' }));
      const body = fakes.anthropic.requests.at(-1)!.body!;
      const tools = body.tools as Array<{ name: string; input_schema: unknown; description: string }>;
      expect(tools.map((t) => [t.name, t.description, t.input_schema])).toEqual([['Read', 'Read a file', READ.inputSchema]]);
      expect(body.tool_choice).toEqual({ type: 'any' });
      expect(response.text).toBe('Reading it.');
      expect(response.toolCalls).toMatchObject([{ name: 'Read', input: { file_path: 'src/a.ts' } }]);
    });
  }

  it('unparseable arguments and unknown tools come back marked, not thrown', async () => {
    const ref = `openai:gpt-4.1-mini@${fakes.openai.baseURL}`;
    fakes.openai.setRespond({ toolCalls: [{ name: 'Read', arguments: '{"file_path": "/a' }] });
    const bad = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(request(ref));
    expect(bad.toolCalls).toMatchObject([{ name: 'Read', invalid: 'unparseable', input: '{"file_path": "/a' }]);
    fakes.openai.setRespond({ toolCalls: [{ name: 'Teleport', arguments: { to: 'mars' } }] });
    const unknown = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(request(ref));
    expect(unknown.toolCalls).toMatchObject([{ name: 'Teleport', invalid: 'unknown-tool', input: { to: 'mars' } }]);
  });

  it('prose instead of a call is a plain answer without toolCalls; no tools on the wire without tools', async () => {
    const ref = `openai:gpt-4.1-mini@${fakes.openai.baseURL}`;
    fakes.openai.setRespond({ text: 'I would read the config next.' });
    const prose = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(request(ref));
    expect(prose.toolCalls).toBeUndefined();
    const plain = await createAdapter(ref, { env: ENV, ...GENEROUS_TIMEOUTS }).generate(request(ref, { tools: undefined, toolChoice: undefined }));
    expect(plain.text).toBe('I would read the config next.');
    expect(fakes.openai.requests.at(-1)!.body!.tools).toBeUndefined();
  });

  it('tools enter the cell key only when present: a request without them keeps its old key', () => {
    const base: ModelRequest = { model: 'sim:echo', messages: [{ role: 'user', content: 'x' }], params: {}, sample: 0 };
    // The key every store written before tool calling used (pinned).
    expect(cellKey(base)).toBe(cellKey({ ...base, tools: undefined }));
    // sha256 of {"messages":[{"content":"x","role":"user"}],"model":"sim:echo","params":{},"sample":0}
    expect(cellKey(base)).toBe('c4a2b9eba1b6d4e8a5bc6ea909d9ec8e06ebe15f1c3ec8960221d94baf8029e6');
    const withTools = { ...base, tools: [READ] };
    expect(cellKey(withTools)).not.toBe(cellKey(base));
    expect(cellKey({ ...withTools, toolChoice: 'required' })).not.toBe(cellKey(withTools));
    expect(contentKey(withTools)).not.toBe(contentKey(base));
    const identity = cellIdentity({ ...withTools, toolChoice: 'auto' });
    expect(identity.key).toBe(cellKey({ ...withTools, toolChoice: 'auto' }));
    expect(identity.contentKey).toBe(contentKey({ ...withTools, toolChoice: 'auto' }));
    expect(JSON.parse(identity.json)).toEqual(canonicalRequest({ ...withTools, toolChoice: 'auto' }));
  });
});
