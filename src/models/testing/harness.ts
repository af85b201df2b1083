/**
 * Vitest set-up shared by the tests that drive adapters against the fake servers:
 * the servers' lifetime, the usual request, and reading a ModelCallError back.
 */

import { afterAll, beforeAll, expect } from 'vitest';
import { ModelCallError } from '../errors.js';
import type { ModelRequest } from '../types.js';
import { startFakeAnthropic } from './fake-anthropic.js';
import { startFakeOpenAI } from './fake-openai.js';
import type { FakeServer } from './fake-server.js';

/** Limits for calls that should succeed, generous for shared, loaded machines. */
export const GENEROUS_TIMEOUTS = { timeoutMs: 30_000, stallTimeoutMs: 15_000 };

export interface FakeProviders {
  openai: FakeServer;
  anthropic: FakeServer;
}

/**
 * A fake OpenAI and a fake Anthropic server, both wanting `apiKey`, started before the
 * tests of the enclosing file or `describe` block and closed after them. Read the servers
 * from the returned object inside the tests (they exist once `beforeAll` has run).
 */
export function useFakeProviders(apiKey: string): FakeProviders {
  const servers = {} as FakeProviders;
  beforeAll(async () => {
    [servers.openai, servers.anthropic] = await Promise.all([startFakeOpenAI({ apiKey }), startFakeAnthropic({ apiKey })]);
  });
  afterAll(async () => {
    await Promise.all([servers.openai?.close(), servers.anthropic?.close()]);
  });
  return servers;
}

/** A system prompt "You are terse." and the user turn "Say hello." for `model`, with `extra` laid over. */
export function helloRequest(model: string, extra: Partial<ModelRequest> = {}): ModelRequest {
  return {
    model,
    messages: [
      { role: 'system', content: 'You are terse.' },
      { role: 'user', content: 'Say hello.' },
    ],
    params: { temperature: 0, maxTokens: 64 },
    sample: 0,
    ...extra,
  };
}

/** The ModelCallError the promise rejects with; fails the test when it resolves or rejects with anything else. */
export async function rejectionOf(promise: Promise<unknown>): Promise<ModelCallError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(ModelCallError);
    return error as ModelCallError;
  }
  throw new Error('expected the call to fail');
}

/** The ModelCallError `action` throws; fails the test when it returns or throws anything else. */
export function thrownBy(action: () => unknown): ModelCallError {
  try {
    action();
  } catch (error) {
    expect(error).toBeInstanceOf(ModelCallError);
    return error as ModelCallError;
  }
  throw new Error('expected a ModelCallError to be thrown');
}
