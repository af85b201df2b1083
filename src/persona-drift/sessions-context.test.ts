import { describe, expect, it } from 'vitest';
import { readSession } from '../sessions/read.js';
import { CLAUDE_MAIN, CLAUDE_NOTES, CODEX_MAIN } from '../sessions/testing/fixtures.js';
import { personaConfigSchema } from './config.js';
import { sessionContextFacts, sessionPlanInput } from './sessions-input.js';

const config = (positions: unknown[]) => personaConfigSchema.parse({ sessions: ['x'], targets: ['sim:persona'], judges: ['sim:judge'], positions });

describe('session facts for the run manifest', () => {
  it('records the goal and every position whose context follows the encrypted Codex remote summary', async () => {
    const s = await readSession(CODEX_MAIN);
    const facts = sessionContextFacts(s, config([{ steps: [1, 14, 19, 20] }]));
    expect(facts.goal).toMatchObject({ text: 'The /health endpoint returns 500. Find out why.', source: 'prompt' });
    // The remote compaction (C2) is at agent step 18: positions after it lack its summary.
    expect(s.compactions[1]!.compaction).toBe('codex-remote');
    expect(facts.missingSummaries.map((m) => [m.position, m.compaction])).toEqual([
      ['T0019', 2],
      ['T0020', 2],
    ]);
    expect(sessionContextFacts(await readSession(CLAUDE_MAIN), config([{ uniform: 4 }])).missingSummaries).toEqual([]);
  });

  it('a session too short for deciles names its file', async () => {
    const short = await readSession(CLAUDE_NOTES);
    expect(() => sessionPlanInput(short, config([{ deciles: true }]), [short])).toThrow(CLAUDE_NOTES);
  });

  it('compactions.preOffset moves the pre position before the boundary', async () => {
    const s = await readSession(CLAUDE_MAIN);
    const at = (preOffset: number) =>
      sessionPlanInput(s, config([{ compactions: { postOffset: 5, preOffset } }]), [s]).positions.map((p) => [p.label, p.value]);
    // The compaction is at agent step 17.
    expect(at(1)).toEqual([
      ['C1-pre', 17],
      ['C1-post', 22],
    ]);
    expect(at(5)).toEqual([
      ['C1-pre', 13],
      ['C1-post', 22],
    ]);
  });
});
