import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../core/canonical-json.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { ModelRequest } from '../models/types.js';
import { canonicalRequest, cellIdentity, cellKey, contentKey, scrubbedCanonicalJson, scrubFields, scrubSecrets, secretValuesFromEnv } from './keys.js';

const base: ModelRequest = {
  model: 'openai:gpt-4.1-mini',
  messages: [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Hello?' },
  ],
  params: { temperature: 0, maxTokens: 100 },
  sample: 0,
};

describe('cellKey', () => {
  it('is a hex SHA-256 that ignores key order and labels', () => {
    const reordered = { sample: 0, params: { maxTokens: 100, temperature: 0 }, messages: base.messages, model: base.model };
    expect(cellKey(base)).toMatch(/^[0-9a-f]{64}$/);
    expect(cellKey(reordered)).toBe(cellKey(base));
    expect(cellKey({ request: base, labels: { arm: 'a' } })).toBe(cellKey({ request: base, labels: { arm: 'b' } }));
  });

  it('changes with the model, any message, any parameter and the sample index', () => {
    const variants: ModelRequest[] = [
      { ...base, model: 'openai:gpt-4.1' },
      { ...base, messages: [base.messages[0]!, { role: 'user', content: 'Hello!' }] },
      { ...base, params: { ...base.params, temperature: 0.7 } },
      { ...base, params: { ...base.params, seed: 1 } },
      { ...base, sample: 1 },
    ];
    const keys = new Set([cellKey(base), ...variants.map((variant) => cellKey(variant))]);
    expect(keys.size).toBe(variants.length + 1);
  });

  it('does not let an API key into the hash (two requests differing only by key share a cell)', () => {
    const a = { ...base, params: { providerOptions: { apiKey: 'sk-one-aaaaaaaa' } } };
    const b = { ...base, params: { providerOptions: { apiKey: 'sk-two-bbbbbbbb' } } };
    expect(cellKey(a)).toBe(cellKey(b));
    expect(JSON.stringify(canonicalRequest(a))).not.toContain('sk-one');
  });

  it('cellIdentity agrees with cellKey, contentKey and the canonical scrubbed request', () => {
    const request = { ...base, params: { ...base.params, providerOptions: { apiKey: 'sk-zzzzzzzzzz', b: [1, { a: 2 }] } } };
    const id = cellIdentity(request);
    expect(id.key).toBe(cellKey(request));
    expect(id.contentKey).toBe(contentKey(request));
    expect(id.json).toBe(canonicalJson(canonicalRequest(request)));
    expect(id.json).not.toContain('sk-zzzz');
  });

  it('content key ignores the model only', () => {
    expect(contentKey({ ...base, model: 'anthropic:claude' })).toBe(contentKey(base));
    expect(contentKey({ ...base, sample: 2 })).not.toBe(contentKey(base));
  });

  it('rejects malformed requests with the field named', () => {
    expect(() => cellKey({ ...base, model: '' })).toThrow(/request.model/);
    expect(() => cellKey({ ...base, messages: [] })).toThrow(/request.messages/);
    expect(() => cellKey({ ...base, sample: -1 })).toThrow(/request.sample/);
    expect(() => cellKey({ ...base, sample: 0.5 })).toThrow(InvalidArgumentError);
    expect(() => cellKey({ ...base, messages: [{ role: 'tool' as never, content: 'x' }] })).toThrow(/messages\[0\]\.role/);
  });
});

describe('secret scrubbing', () => {
  it('collects credential-like environment values of real length only', () => {
    const values = secretValuesFromEnv({
      OPENAI_API_KEY: 'sk-abcdefghijk',
      GITHUB_TOKEN: 'ghp_123456789',
      SHORT_KEY: 'abc',
      HOME: '/home/someone-long-path',
      maxTokens: '12345678',
    });
    expect(values.sort()).toEqual(['ghp_123456789', 'sk-abcdefghijk']);
  });

  it('replaces credential fields and secret values nested anywhere, leaving other fields alone', () => {
    const scrubbed = scrubSecrets({ apiKey: 'x', nested: [{ Authorization: 'Bearer y', maxTokens: 5, text: 'use sk-SECRET-123 now' }] }, ['sk-SECRET-123']);
    expect(scrubbed).toEqual({ apiKey: '[redacted]', nested: [{ Authorization: '[redacted]', maxTokens: 5, text: 'use [redacted] now' }] });
  });
});

describe('scrubbedCanonicalJson', () => {
  it('equals canonicalJson(scrubFields(value)) on arbitrary JSON data with credential fields', () => {
    const withSecrets = fc.oneof(
      fc.jsonValue(),
      fc.record({ apiKey: fc.jsonValue(), nested: fc.record({ Authorization: fc.jsonValue(), other: fc.jsonValue() }) }),
      fc.dictionary(fc.constantFrom('api_key', 'x-api-key', 'password', 'b', 'a', 'maxTokens'), fc.jsonValue()),
    );
    fc.assert(
      fc.property(withSecrets, (value) => {
        expect(scrubbedCanonicalJson(value)).toBe(canonicalJson(scrubFields(value)));
      }),
      { numRuns: 500 },
    );
  });

  it('drops undefined members, writes undefined array items as null, and refuses non-finite numbers', () => {
    const value = { b: undefined, a: [1, undefined, 'x'], c: { d: null } };
    expect(scrubbedCanonicalJson(value)).toBe(canonicalJson(value));
    const indexKeys = { b: 1, '10': 2, '': 3, '9': 4, '01': 5, a: 6 };
    expect(scrubbedCanonicalJson(indexKeys)).toBe(canonicalJson(indexKeys));
    expect(() => scrubbedCanonicalJson({ x: Number.NaN })).toThrow(/non-finite/);
    expect(scrubbedCanonicalJson(JSON.parse('{"__proto__":1}'))).toBe('{"__proto__":1}');
    // The property test once found this: scrubFields dropped an own "__proto__" member (assignment sets the prototype).
    expect(canonicalJson(scrubFields(JSON.parse('{"__proto__":0}')))).toBe('{"__proto__":0}');
    expect(canonicalJson(scrubFields(JSON.parse('{"__proto__":{"password":"x"}}')))).toBe('{"__proto__":{"password":"[redacted]"}}');
    // Own "__proto__" members are kept by both, nested too, and sorted with the others.
    for (const text of ['{"__proto__":1}', '{"b":{"__proto__":{"x":2}},"__proto__":[3],"a":0}']) {
      expect(canonicalJson(JSON.parse(text))).toBe(scrubbedCanonicalJson(JSON.parse(text)));
    }
    expect(canonicalJson(JSON.parse('{"b":{"__proto__":{"x":2}},"__proto__":[3],"a":0}'))).toBe('{"__proto__":[3],"a":0,"b":{"__proto__":{"x":2}}}');
  });
});
