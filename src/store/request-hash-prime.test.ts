import { describe, expect, it } from 'vitest';
import type { ModelRequest } from '../models/types.js';
import { messageDigest, primeMessageDigest, primeRequestKeys, requestKeys } from './request-hash.js';

const long = 'a long message '.repeat(1_000);
const request = (): ModelRequest => ({
  model: 'sim:labeler',
  messages: [
    { role: 'system', content: 'Label.' },
    { role: 'user', content: long },
  ],
  params: { temperature: 0 },
  sample: 0,
});

describe('hashes primed from another thread', () => {
  it('are used for the very request and message they were recorded on', () => {
    const req = request();
    // A wrong value shows that the primed one is returned without hashing.
    primeRequestKeys(req, { key: 'primed-key', contentKey: 'primed-content' });
    primeMessageDigest(req.messages[1]!, 'primed-digest');
    expect(requestKeys(req)).toEqual({ key: 'primed-key', contentKey: 'primed-content' });
    expect(messageDigest(req.messages[1]!)).toBe('primed-digest');
  });

  it('are not used once the request changed, nor for an equal request object', () => {
    const truth = requestKeys(request());
    const req = request();
    primeRequestKeys(req, { key: 'primed-key', contentKey: 'primed-content' });
    expect(requestKeys(request())).toEqual(truth);
    req.messages[1] = { role: 'user', content: `${long}!` };
    expect(requestKeys(req)).not.toEqual({ key: 'primed-key', contentKey: 'primed-content' });
    expect(requestKeys(req)).toEqual(requestKeys({ ...request(), messages: [request().messages[0]!, { role: 'user', content: `${long}!` }] }));
    const salted = request();
    primeRequestKeys(salted, { key: 'primed-key', contentKey: 'primed-content' });
    salted.unit = 'measurement:x';
    expect(requestKeys(salted).key).not.toBe('primed-key');
    // A request with tools or a draw unit is never primed.
    const withUnit = { ...request(), unit: 'u' };
    primeRequestKeys(withUnit, { key: 'primed-key', contentKey: 'primed-content' });
    expect(requestKeys(withUnit).key).not.toBe('primed-key');
  });
});
