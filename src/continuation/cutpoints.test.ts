import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../core/errors.js';
import { packageRoot } from '../core/version.js';
import { readSession } from '../sessions/read.js';
import { buildArms, immediateContext } from './arms.js';
import { cutpointCandidates, selectCutpoints } from './cutpoints.js';
import { taskAt, taskSegments, windowTask } from './tasks.js';
import { reconstructTools } from './tools.js';

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CODEX = join(packageRoot(), 'src', 'continuation', '__fixtures__', 'codex-ledger.jsonl');
const NO_TOOLS = join(
  packageRoot(),
  'src',
  'sessions',
  '__fixtures__',
  'claude-continuation',
  'projects',
  '-home-dev-app',
  'a11a0000-0000-4000-8000-000000000001.jsonl',
);

describe('continuation cutpoints', () => {
  it('candidates are assistant messages with exactly one tool call; the context ends just before it', async () => {
    const session = await readSession(DEMO);
    const candidates = cutpointCandidates(session);
    expect(candidates).toHaveLength(27);
    for (const c of candidates) {
      const m = session.messages[c.end]!;
      expect(m.role).toBe('assistant');
      expect(m.blocks.filter((b) => b.type === 'tool_call')).toHaveLength(1);
    }
  });

  it('stratified: one from the middle of each of 25 equal strata, in order; strided follows the reference rule', async () => {
    const session = await readSession(DEMO);
    const all = cutpointCandidates(session);
    const cuts = selectCutpoints(session, { count: 25 });
    expect(cuts.map((c) => c.id)).toEqual(Array.from({ length: 25 }, (_, i) => `C${String(i + 1).padStart(2, '0')}`));
    expect(new Set(cuts.map((c) => c.end)).size).toBe(25);
    expect(cuts.map((c) => c.end)).toEqual([...cuts.map((c) => c.end)].sort((a, b) => a - b));
    const five = selectCutpoints(session, { count: 5 });
    // 27 candidates in 5 strata: [0,5) [5,10) [10,16) [16,21) [21,27); middles 2, 7, 12, 18, 23.
    expect(five.map((c) => c.end)).toEqual([2, 7, 12, 18, 23].map((i) => all[i]!.end));
    const strided = selectCutpoints(session, { count: 5, strategy: 'strided', skipFirst: 2 });
    expect(strided.map((c) => c.end)).toEqual([2, 7, 12, 17, 22].map((i) => all[i]!.end));
  });

  it('bad input: no tool calls, or fewer usable cutpoints than asked, names the file and the count found', async () => {
    const none = await readSession(NO_TOOLS);
    expect(() => selectCutpoints(none, { count: 25 })).toThrow(InputError);
    expect(() => selectCutpoints(none, { count: 25 })).toThrow(/a11a0000-0000-4000-8000-000000000001\.jsonl.*no tool calls.*0 usable cutpoints/);
    const codex = await readSession(CODEX);
    expect(() => selectCutpoints(codex, { count: 25 })).toThrow(/codex-ledger\.jsonl: 25 cutpoints asked, but the transcript has only 17 usable cutpoints/);
  });

  it('Codex: shell argv and apply_patch calls are ground truths; tools are reconstructed with their argument types', async () => {
    const codex = await readSession(CODEX);
    const cuts = selectCutpoints(codex, { count: 8 });
    expect(new Set(cuts.map((c) => c.groundTruth.name))).toEqual(new Set(['shell', 'apply_patch']));
    const tools = reconstructTools(codex);
    expect(tools.tools.map((t) => t.name)).toEqual(['apply_patch', 'shell']);
    expect(tools.tools[1]!.inputSchema).toEqual({
      type: 'object',
      properties: { command: { type: 'array' }, workdir: { type: 'string' } },
      required: ['command', 'workdir'],
    });
    expect(tools.tools[0]!.inputSchema).toMatchObject({ properties: { input: { type: 'string' } }, required: ['input'] });
  });

  it('tasks: long human prompts open tasks; the window task is the majority label', async () => {
    const session = await readSession(DEMO);
    const segments = taskSegments(session);
    expect(segments.map((s) => s.label)).toEqual(['T1', 'T2', 'T3', 'T4', 'T5', 'T6', 'T7', 'T8']);
    expect(taskAt(segments, 16)).toBe('T3');
    expect(windowTask(segments, [10, 11, 15, 16, 17])).toBe('T3');
  });

  it("arms are length-matched: filler and cross have the recent window's characters; scratch is empty; every arm ends with the same immediate context", async () => {
    const session = await readSession(DEMO);
    const codex = await readSession(CODEX);
    const [cut] = selectCutpoints(session, { count: 25 }).slice(20);
    const arms = buildArms(session, cut!, codex, { windowChars: 1200 });
    expect(arms.arms.recent.chars).toBe(1200);
    expect(arms.arms.filler.chars).toBe(1200);
    expect(arms.arms.cross.chars).toBe(1200);
    expect(arms.arms.scratch.messages).toEqual([]);
    expect(arms.arms.recent.messages.at(-1)!.role).toBe('assistant');
    expect(arms.arms.cross.messages[0]!.content).not.toBe(arms.arms.recent.messages[0]!.content);
    expect(arms.immediate).toBe(immediateContext(session, cut!.end));
    expect(arms.immediate).toMatch(/Latest tool result/);
  });
});
