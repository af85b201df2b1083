import { describe, expect, it } from 'vitest';
import { memoryConfigSchema } from './config.js';
import { memoryDecodingParams } from './run.js';

describe('memoryDecodingParams', () => {
  const config = memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler' });

  it('sends the paper settings, with top-k only where the provider takes it', () => {
    expect(memoryDecodingParams(config.decoding, 'vllm:Qwen/Qwen3-4B')).toMatchObject({ temperature: 0.7, topP: 0.98, topK: 50, maxTokens: 2048 });
    expect(memoryDecodingParams(config.decoding, 'openai:gpt-4.1-mini')).not.toHaveProperty('topK');
  });

  it('does not send top_p with temperature to Anthropic, which rejects the pair', () => {
    const params = memoryDecodingParams(config.decoding, 'anthropic:claude-sonnet-4-5');
    expect(params.temperature).toBe(0.7);
    expect(params).not.toHaveProperty('topP');
  });
});
