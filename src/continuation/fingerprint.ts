import { createHash, type Hash } from 'node:crypto';
import { canonicalJson } from '../core/canonical-json.js';
import type { ModelRequest } from '../models/types.js';
import { getOrInsert } from '../core/get-or-insert.js';

/**
 * `hashCanonical({ requests, truths })`, streamed: the same SHA-256 (so runs recorded before
 * resume), without building the canonical JSON of every request as one string. A plan of
 * 120 targets × 100 cutpoints × 4 arms is gigabytes of JSON, past the longest string V8 can
 * hold (RangeError: Invalid string length). Messages and tool lists are shared by reference
 * between the cells of a cutpoint and between targets, so their canonical JSON is computed
 * once per object. Pure.
 */

type Json = Record<string, unknown>;

/** Canonical JSON of an object member value, cached per object (messages, tool lists, params). */
function cachedJson(value: unknown, cache: WeakMap<object, string>): string {
  if (value === null || typeof value !== 'object') return canonicalJson(value);
  return getOrInsert(cache, value, () => canonicalJson(value));
}

/** Streams the canonical JSON of one request: sorted members, `messages` one message at a time. */
function updateWithRequest(hash: Hash, request: ModelRequest, cache: WeakMap<object, string>): void {
  const record = request as unknown as Json;
  hash.update('{');
  let first = true;
  for (const name of Object.keys(record).sort()) {
    const member = record[name];
    if (member === undefined) continue;
    if (!first) hash.update(',');
    first = false;
    hash.update(`${JSON.stringify(name)}:`);
    if (name === 'messages' && Array.isArray(member)) {
      hash.update('[');
      member.forEach((message, index) => {
        if (index > 0) hash.update(',');
        hash.update(message === undefined ? 'null' : cachedJson(message, cache));
      });
      hash.update(']');
    } else {
      hash.update(cachedJson(member, cache));
    }
  }
  hash.update('}');
}

/**
 * SHA-256 (hex) of the canonical JSON of `{ requests, truths }`, equal to
 * `hashCanonical({ requests, truths })` for plain JSON requests.
 */
export function streamedInputFingerprint(requests: Iterable<ModelRequest>, truths: unknown): string {
  const hash = createHash('sha256');
  const cache = new WeakMap<object, string>();
  hash.update('{"requests":[');
  let index = 0;
  for (const request of requests) {
    if (index > 0) hash.update(',');
    updateWithRequest(hash, request, cache);
    index += 1;
  }
  hash.update(`],"truths":${canonicalJson(truths)}}`);
  return hash.digest('hex');
}
