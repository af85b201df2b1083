import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson, hashCanonical } from '../core/canonical-json.js';
import { packageRoot } from '../core/version.js';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { readSession } from '../sessions/read.js';
import { continuationConfigSchema } from './config.js';
import { streamedInputFingerprint } from './fingerprint.js';
import { planContinuation } from './plan.js';
import { inputFingerprint } from './run.js';

/** V8's longest string (2^29 − 24 one-byte characters on 64-bit builds). */
const MAX_STRING = 2 ** 29 - 24;

describe('continuation input fingerprint (streamed)', () => {
  it('equals hashCanonical({ requests, truths }) on a real plan, so recorded runs resume', async () => {
    const demo = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
    const session = await readSession(demo);
    const plan = planContinuation(continuationConfigSchema.parse({ session: demo, targets: ['sim:a', 'sim:b'] }), session, undefined);
    const old = hashCanonical({ requests: plan.specs.map((s) => s.request), truths: plan.cutpoints.map((c) => [c.id, c.groundTruth]) });
    expect(inputFingerprint(plan)).toBe(old);
  });

  it('equals hashCanonical on awkward requests: unsorted members, undefined members, a draw unit, nested tool schemas', () => {
    const messages: ChatMessage[] = [
      { role: 'system', content: 'sys' },
      { content: 'q "quoted" \u2028 é', role: 'user', cacheBreakpoint: true },
    ];
    const requests = [
      {
        sample: 1,
        params: { temperature: 0, maxTokens: undefined, stop: ['a'] },
        messages,
        model: 'sim:x',
        toolChoice: 'auto',
        tools: [{ name: 'Bash', inputSchema: { type: 'object', properties: { z: {}, a: { type: 'string' } } } }],
      },
      { model: 'sim:x', messages, params: {}, sample: 0, unit: 'C03', identity: undefined },
    ] as unknown as ModelRequest[];
    const truths = [['C01', { name: 'Bash', input: { b: 1, a: [2, { d: null, c: 'x' }] } }]];
    expect(streamedInputFingerprint(requests, truths)).toBe(hashCanonical({ requests, truths }));
  });

  it('hashes 120 targets × 100 cutpoints × 4 arms whose JSON is longer than any string V8 can hold', () => {
    const system: ChatMessage = { role: 'system', content: 'You are an agent.' };
    const params = { temperature: 0, maxTokens: 4096 };
    const tools = [{ name: 'Bash', inputSchema: { type: 'object', properties: { command: { type: 'string' } } } }];
    const cutpoints = Array.from({ length: 100 }, (_, c) => {
      const window = (arm: string): ChatMessage => ({ role: 'user', content: `${arm} window of cutpoint ${c}: ${'x'.repeat(16_000)}` });
      const immediate: ChatMessage = { role: 'user', content: `next call at cutpoint ${c}` };
      return {
        recent: [system, window('recent'), immediate],
        cross: [system, window('cross'), immediate],
        filler: [system, window('filler'), immediate],
        scratch: [system, immediate],
      };
    });
    const targets = Array.from({ length: 120 }, (_, t) => `sim:target-${t}`);
    function* requests(): Generator<ModelRequest> {
      for (const model of targets) {
        for (const arms of cutpoints) {
          for (const messages of Object.values(arms)) yield { model, messages, params, sample: 0, tools, toolChoice: 'auto' };
        }
      }
    }
    // The canonical JSON the old fingerprint built as one string: counted, never allocated.
    const messageChars = new Map<ChatMessage, number>();
    let total = 0;
    for (const request of requests()) {
      for (const m of request.messages) {
        const n = messageChars.get(m) ?? canonicalJson(m).length;
        messageChars.set(m, n);
        total += n;
      }
    }
    expect(total).toBeGreaterThan(MAX_STRING);
    const truths = cutpoints.map((_, c) => [`C${c}`, { name: 'Bash', input: { command: 'ls' } }]);
    const a = streamedInputFingerprint(requests(), truths);
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    // Sensitive to one character of one request (equality with the old hash: the tests above).
    (cutpoints[99]!.recent[2] as { content: string }).content += '!';
    expect(streamedInputFingerprint(requests(), truths)).not.toBe(a);
  }, 120_000);
});
