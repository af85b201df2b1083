import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { readSession } from '../sessions/read.js';
import { personaConfigSchema } from './config.js';
import { sessionPlanInput } from './sessions-input.js';

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

const config = (extra: Record<string, unknown>) => personaConfigSchema.parse({ sessions: [DEMO], targets: ['sim:persona'], judges: ['sim:judge'], ...extra });

describe('sessionPlanInput', () => {
  it('probes a context once when two selectors pick it, listing every selector label', async () => {
    const session = await readSession(DEMO, { content: 'full' });
    const total = session.counters.agentSteps;
    const input = sessionPlanInput(session, config({ positions: [{ steps: [20] }, { fraction: [20 / total] }] }), [session]);
    expect(input.positions).toHaveLength(1);
    expect(input.positions[0]?.selectedBy).toHaveLength(2);
  });

  it('replays far up to the next compaction, and says where it was clipped', async () => {
    const session = await readSession(DEMO, { content: 'full' });
    const boundary = session.compactions[0]!.atMessage;
    const input = sessionPlanInput(session, config({ positions: [{ steps: [5, session.counters.agentSteps - 2] }] }), [session]);
    const [early, late] = input.positions;
    const before = input.continuationInfo!(early!, 1000);
    expect(before.clipped).toBe('compaction C1');
    expect(before.assistantMessages).toBeLessThan(1000);
    // Every replayed message is a real message between the position and the compaction.
    const earlyEnd = boundary - before.timelineMessages;
    expect(earlyEnd).toBeGreaterThan(0);
    expect(before.timelineMessages).toBeGreaterThan(0);
    const after = input.continuationInfo!(late!, 1000);
    expect(after.clipped).toBe('session end');
    const short = input.continuationInfo!(early!, 1);
    expect(short.clipped).toBeNull();
    expect(short.assistantMessages).toBe(1);
  });
});
