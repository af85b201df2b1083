import { describe, expect, it } from 'vitest';
import { openaiRetentionByModel, openaiRetentionFor, openaiRetentionTtlMs, supportsExtendedRetention } from './cache-retention.js';

const MINUTE = 60_000;

describe('OpenAI prompt-cache retention', () => {
  it('knows the models OpenAI lists for 24-hour retention, dated snapshots included', () => {
    for (const id of ['gpt-4.1', 'gpt-4.1-2025-04-14', 'gpt-5', 'gpt-5.1-codex-mini', 'gpt-5.4', 'gpt-5.5-pro', 'GPT-5.2']) {
      expect(supportsExtendedRetention(id), id).toBe(true);
    }
    // Not listed: older models, smaller GPT-4.1 variants, and GPT-5.6+ (which use prompt_cache_options instead).
    for (const id of ['gpt-4o', 'gpt-4.1-mini', 'gpt-4.1-nano', 'o3', 'gpt-5.6', 'gpt-6', 'model-x']) {
      expect(supportsExtendedRetention(id), id).toBe(false);
    }
  });

  it('takes the config’s retention; else 24h only where followers wait for their leaders and the model takes it', () => {
    expect(openaiRetentionFor('gpt-4o', 'in_memory', true)).toBe('in_memory');
    expect(openaiRetentionFor('gpt-4o', '24h', false)).toBe('24h');
    expect(openaiRetentionFor('gpt-4.1', undefined, true)).toBe('24h');
    expect(openaiRetentionFor('gpt-4.1', undefined, false)).toBeUndefined();
    expect(openaiRetentionFor('gpt-4o', undefined, true)).toBeUndefined();
  });

  it('plans 24 hours for extended retention and the 5-minute short end otherwise', () => {
    expect(openaiRetentionTtlMs('24h')).toBe(24 * 60 * MINUTE);
    expect(openaiRetentionTtlMs('in_memory')).toBe(5 * MINUTE);
    expect(openaiRetentionTtlMs(undefined)).toBe(5 * MINUTE);
  });
});

describe('openaiRetentionByModel', () => {
  it('lists each openai: model once with the retention it asks for, and leaves other providers out', () => {
    const refs = ['openai:gpt-4.1', 'anthropic:claude-sonnet-4-5', 'openai:gpt-4o@http://127.0.0.1:9/v1', 'openai:gpt-4.1', 'sim:judge'];
    expect(openaiRetentionByModel(refs, undefined, true)).toEqual([
      { ref: 'openai:gpt-4.1', retention: '24h' },
      { ref: 'openai:gpt-4o@http://127.0.0.1:9/v1', retention: undefined },
    ]);
    expect(openaiRetentionByModel(refs, undefined, false).map((r) => r.retention)).toEqual([undefined, undefined]);
    expect(openaiRetentionByModel(refs, 'in_memory', true).map((r) => r.retention)).toEqual(['in_memory', 'in_memory']);
  });
});
