import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FIXTURES } from './testing/fixtures.js';
import { resolvePosition } from './positions.js';
import { buildPrefix } from './prefix.js';
import { readSession } from './read.js';

/**
 * The flat prefix against an independent Python re-implementation of the reference builder
 * (tools/golden/sessions_flat_prefix.py, output committed), on a linear session where the
 * reference's file-row walk and our DAG walk agree.
 */
const expected = JSON.parse(readFileSync(join(FIXTURES, 'claude-linear.flat.json'), 'utf8')) as {
  totalAgentSteps: number;
  prefixes: Record<string, string>;
};

describe('flat prefix = the reference builder (independent Python implementation)', async () => {
  const session = await readSession(join(FIXTURES, 'claude-linear.jsonl'));

  it('counts the same agent steps', () => {
    expect(session.counters.agentSteps).toBe(expected.totalAgentSteps);
    expect(session.warnings).toEqual([]);
  });

  it('renders the same text at every position that ends a message', () => {
    let compared = 0;
    for (let step = 1; step <= expected.totalAgentSteps; step += 1) {
      const position = resolvePosition(session, 'agentSteps', step)!;
      // A step inside a merged API message resolves to the whole message; the reference cuts at the line.
      if (position.reached !== step) continue;
      const prefix = buildPrefix(session, position, { mode: 'flat' });
      expect(prefix.messages[0]?.content ?? '', `agent step ${step}`).toBe(expected.prefixes[String(step)]);
      compared += 1;
    }
    expect(compared).toBeGreaterThanOrEqual(12);
  });
});
