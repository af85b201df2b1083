import { describe, expect, it } from 'vitest';
import { fakeResponse } from '../store/testing/fakes.js';
import { ModelCallError } from './errors.js';
import { CallFailedError, callWithRetry } from './retry.js';
import { scriptedAdapter } from './testing/scripted-adapter.js';
import type { ModelRequest, ModelResponse } from './types.js';

const request: ModelRequest = { model: 'fake:m', messages: [{ role: 'user', content: 'hi' }], params: {}, sample: 0 };

const noSleep = async () => undefined;
const reset = () => new ModelCallError('connection', 'socket hang up');

async function failureOf(script: Array<ModelResponse | ModelCallError>, maxAttempts: number): Promise<CallFailedError> {
  try {
    await callWithRetry(scriptedAdapter(script).adapter, request, { policy: { maxAttempts, emptyRetries: 2 }, sleep: noSleep });
  } catch (error) {
    return error as CallFailedError;
  }
  throw new Error('expected the call to fail');
}

describe('dropout classification', () => {
  it('mostly resets ending on one empty answer is a transport failure (retried on resume), not a dropout', async () => {
    const error = await failureOf([reset(), reset(), reset(), reset(), fakeResponse('')], 5);
    expect(error).toBeInstanceOf(CallFailedError);
    expect(error.kind).toBe('connection');
    expect(error.attempts).toBe(5);
    expect(error.message).toMatch(/1 empty answer\(s\) \(a dropout needs 3\)/);
  });

  it('the model answering empty the required number of times is a dropout', async () => {
    const error = await failureOf([reset(), fakeResponse(''), fakeResponse(''), fakeResponse('')], 6);
    expect(error.kind).toBe('empty');
    expect(error.attempts).toBe(4);
    // Every attempt empty, even when attempts run out first, is still the model's answer.
    const allEmpty = await failureOf([fakeResponse('')], 2);
    expect(allEmpty.kind).toBe('empty');
  });
});
