import { AISDKError, APICallError } from 'ai';
import { describe, expect, it } from 'vitest';
import { classifyError, classifyStatus, parseRetryAfter, scrubSecrets } from './classify.js';
import { ModelCallError } from './errors.js';

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-30T12:00:00Z');
  it('reads seconds, fractional seconds, HTTP dates and retry-after-ms', () => {
    expect(parseRetryAfter({ 'retry-after': '30' }, now)).toBe(30_000);
    expect(parseRetryAfter({ 'Retry-After': '1.5' }, now)).toBe(1500);
    expect(parseRetryAfter({ 'retry-after': 'Mon, 30 Nov 2026 12:00:45 GMT' }, now)).toBe(45_000);
    expect(parseRetryAfter({ 'retry-after': 'Mon, 30 Nov 2026 11:00:00 GMT' }, now)).toBe(0);
    expect(parseRetryAfter({ 'retry-after-ms': '250', 'retry-after': '9' }, now)).toBe(250);
  });
  it('falls back to OpenAI x-ratelimit-reset-* durations (the later one)', () => {
    expect(parseRetryAfter({ 'x-ratelimit-reset-requests': '20ms', 'x-ratelimit-reset-tokens': '1.5s' }, now)).toBe(1500);
    expect(parseRetryAfter({ 'x-ratelimit-reset-tokens': '6m0s' }, now)).toBe(360_000);
    expect(parseRetryAfter({ 'x-ratelimit-reset-tokens': '1h2m3s' }, now)).toBe(3_723_000);
    expect(parseRetryAfter({ 'x-ratelimit-reset-tokens': '1.5s', 'retry-after': '2' }, now)).toBe(2000);
    expect(parseRetryAfter({ 'x-ratelimit-reset-tokens': 'soon' }, now)).toBeUndefined();
  });
  it('returns undefined when absent or unreadable', () => {
    expect(parseRetryAfter(undefined, now)).toBeUndefined();
    expect(parseRetryAfter({}, now)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': 'soon' }, now)).toBeUndefined();
    expect(parseRetryAfter({ 'retry-after': '-3' }, now)).toBeUndefined();
  });
});

describe('classifyStatus', () => {
  it.each([
    [429, '', 'rate_limit'],
    [500, '', 'server'],
    [502, '', 'server'],
    [503, '', 'server'],
    [529, '', 'server'],
    [400, '{"error":{"type":"overloaded_error"}}', 'server'],
    [408, '', 'timeout'],
    [401, '', 'auth'],
    [403, '', 'auth'],
    [404, '', 'not_found'],
    [400, 'model "x" not found, try pulling it first', 'not_found'],
    [400, 'bad field', 'bad_request'],
    [413, '', 'bad_request'],
  ] as const)('%i %s → %s', (status, body, kind) => {
    expect(classifyStatus(status, body)).toBe(kind);
  });
});

describe('classifyError', () => {
  it('keeps a ModelCallError as it is', () => {
    const original = new ModelCallError('empty', 'x');
    expect(classifyError(original, { provider: 'p' })).toBe(original);
  });
  it('treats node socket codes as connection failures', () => {
    const error = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(classifyError(error, { provider: 'p' }).kind).toBe('connection');
  });
  it('classifies provider stream error payloads by type', () => {
    expect(classifyError({ type: 'error', error: { type: 'rate_limit_error', message: 'x' } }, { provider: 'p' }).kind).toBe('rate_limit');
    expect(classifyError({ type: 'overloaded_error', message: 'Overloaded' }, { provider: 'p' }).kind).toBe('server');
  });
  it('scrubs secrets and flattens the message to one line', () => {
    const error = classifyError(new Error('socket hang up: key sk-abcdef\nline two'), {
      provider: 'p',
      secrets: ['sk-abcdef'],
    });
    expect(error.message).not.toContain('sk-abcdef');
    expect(error.message).not.toContain('\n');
  });
  it('scrubSecrets ignores very short secrets (would shred messages)', () => {
    expect(scrubSecrets('abc abc', ['abc'])).toBe('abc abc');
    expect(scrubSecrets('key=abcd1234!', ['abcd1234'])).toBe('key=***!');
  });
});

describe("classifyError on the AI SDK's own error classes (recognised by their marker, without loading the SDK)", () => {
  it('an APICallError keeps its status, body message and retry-after', () => {
    const error = new APICallError({
      message: 'Too Many Requests',
      url: 'http://127.0.0.1:1/v1/chat/completions',
      requestBodyValues: {},
      statusCode: 429,
      responseHeaders: { 'retry-after': '3' },
      responseBody: JSON.stringify({ error: { message: 'slow down', type: 'rate_limit_error' } }),
    });
    const classified = classifyError(error, { provider: 'openai', now: 0 });
    expect(classified.kind).toBe('rate_limit');
    expect(classified.status).toBe(429);
    expect(classified.retryAfterMs).toBe(3000);
    expect(classified.message).toContain('HTTP 429');
  });

  it('another AI SDK error is an unusable response; a plain Error with the same name is not taken for one', () => {
    const sdk = new AISDKError({ name: 'AI_SomethingNew', message: 'odd payload' });
    expect(classifyError(sdk, { provider: 'openai' }).kind).toBe('malformed');
    const plain = Object.assign(new Error('odd payload'), { name: 'AI_SomethingNew' });
    expect(classifyError(plain, { provider: 'openai' }).kind).toBe('server');
  });
});
