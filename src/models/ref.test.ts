import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { InvalidArgumentError } from '../core/errors.js';
import { formatModelRef, parseModelRef } from './ref.js';

describe('parseModelRef', () => {
  it.each([
    ['openai:gpt-4.1-mini', { provider: 'openai', model: 'gpt-4.1-mini' }],
    ['anthropic:claude-sonnet-4-5', { provider: 'anthropic', model: 'claude-sonnet-4-5' }],
    ['ollama:qwen3:4b', { provider: 'ollama', model: 'qwen3:4b' }],
    ['vllm:Qwen/Qwen3-4B', { provider: 'vllm', model: 'Qwen/Qwen3-4B' }],
    ['vllm:Qwen/Qwen3-4B@http://127.0.0.1:8000/v1', { provider: 'vllm', model: 'Qwen/Qwen3-4B', baseURL: 'http://127.0.0.1:8000/v1' }],
    ['openai-compatible:my-model@https://example.test/api/v1/', { provider: 'openai-compatible', model: 'my-model', baseURL: 'https://example.test/api/v1' }],
    ['local:hf:Qwen/Qwen3-0.6B-GGUF:Q8_0', { provider: 'local', model: 'hf:Qwen/Qwen3-0.6B-GGUF:Q8_0' }],
    ['local:/models/a@b.gguf', { provider: 'local', model: '/models/a@b.gguf' }],
    ['sim:echo', { provider: 'sim', model: 'echo' }],
    ['replay:runs/a@http://x.db', { provider: 'replay', model: 'runs/a@http://x.db' }],
    // '@' not followed by a URL belongs to the model id (e.g. Vertex-style versions).
    ['openrouter:vendor/model@2024', { provider: 'openrouter', model: 'vendor/model@2024' }],
    // Only the last '@' starts the base URL.
    ['ollama:a@b@http://127.0.0.1:11434/v1', { provider: 'ollama', model: 'a@b', baseURL: 'http://127.0.0.1:11434/v1' }],
    ['OpenAI:gpt-4o', { provider: 'openai', model: 'gpt-4o' }],
  ])('%s', (ref, expected) => {
    expect(parseModelRef(ref)).toEqual(expected);
  });

  it('lists the valid providers for an unknown prefix', () => {
    expect(() => parseModelRef('gemini:flash')).toThrow(InvalidArgumentError);
    expect(() => parseModelRef('gemini:flash')).toThrow(/valid providers: openai, anthropic, vllm, ollama/);
  });

  it.each([
    ['', /required/],
    ['gpt-4o', /not a model reference/],
    [':gpt-4o', /not a model reference/],
    ['openai:', /names no model/],
    ['openai:@http://127.0.0.1:1/v1', /names no model/],
    ['openai-compatible:m', /needs a base URL/],
    ['sim:echo@http://127.0.0.1:1', /take no @baseURL/],
    ['vllm:m@http://', /not a valid base URL/],
  ])('rejects %j', (ref, message) => {
    expect(() => parseModelRef(ref)).toThrow(message);
  });

  it('refuses credentials in a base URL without echoing them', () => {
    let message = '';
    try {
      parseModelRef('vllm:m@http://user:hunter2@127.0.0.1:8000/v1');
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/credentials/);
    expect(message).not.toContain('hunter2');
  });

  it('format(parse(x)) round-trips', () => {
    const id = fc.stringMatching(/^[A-Za-z0-9][A-Za-z0-9._:/-]{0,30}$/);
    fc.assert(
      fc.property(
        fc.constantFrom('openai', 'anthropic', 'vllm', 'ollama', 'together', 'openrouter'),
        id,
        fc.option(fc.integer({ min: 1, max: 65535 }), { nil: undefined }),
        (provider, model, port) => {
          const ref = port === undefined ? { provider, model } : { provider, model, baseURL: `http://127.0.0.1:${port}/v1` };
          expect(parseModelRef(formatModelRef(ref))).toEqual(ref);
        },
      ),
    );
  });
});
