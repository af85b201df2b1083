import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { readSession } from '../sessions/read.js';
import { countSharedDraws } from '../store/draw-units.js';
import { continuationConfigSchema } from './config.js';
import { planContinuation } from './plan.js';

/** A Claude Code transcript of a polling loop: every cutpoint sees the same immediate context. */
function pollingSession(steps: number): string {
  const lines: string[] = [];
  let parent: string | null = null;
  let n = 0;
  const push = (type: 'user' | 'assistant', message: unknown) => {
    n += 1;
    const uuid = `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
    lines.push(JSON.stringify({ sessionId: 'poll', type, uuid, parentUuid: parent, timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(), message }));
    parent = uuid;
  };
  push('user', { role: 'user', content: 'Wait until the deployment is ready, then tell me.' });
  for (let i = 0; i < steps; i += 1) {
    push('assistant', { role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'text', text: 'Checking the pods again.' }] });
    push('assistant', { role: 'assistant', model: 'claude-sonnet-4-5', content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Bash', input: { command: 'kubectl get pods' } }] });
    push('user', { role: 'user', content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content: 'web-0   0/1   Pending' }] });
  }
  const file = join(mkdtempSync(join(tmpdir(), 'echolens-poll-')), 'poll.jsonl');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

describe('continuation cutpoints share no draws', () => {
  it('a request planned at two cutpoints is drawn once per cutpoint; unshared requests keep their keys', async () => {
    const file = pollingSession(12);
    const session = await readSession(file);
    const config = continuationConfigSchema.parse({ session: file, targets: ['sim:continuation'], cutpoints: { count: 6 }, windowTokens: 100 });
    const plan = planContinuation(config, session, undefined);
    const byCutpoint = (spec: { labels: Record<string, unknown> }) => String(spec.labels.cutpoint);
    expect(countSharedDraws(plan.specs, byCutpoint)).toBe(0);
    const salted = plan.specs.filter((s) => s.request.unit !== undefined);
    // The scratch arm (no context, the same immediate turn) repeats at every cutpoint.
    expect(salted.some((s) => s.labels.arm === 'scratch')).toBe(true);
    expect(salted.every((s) => s.request.unit === s.labels.cutpoint)).toBe(true);
    expect(plan.notes.join('\n')).toMatch(/arose at more than one cutpoint: each cutpoint got its own draw/);
  });

  it('the demo session has no shared request: its plan is unchanged', async () => {
    const demo = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
    const session = await readSession(demo);
    const plan = planContinuation(continuationConfigSchema.parse({ session: demo, targets: ['sim:continuation'] }), session, undefined);
    expect(plan.specs.every((s) => s.request.unit === undefined)).toBe(true);
  });
});
