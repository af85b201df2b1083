import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { smallMemoryRunArgs } from '../cli/testing/surfaces.js';
import { startSimWireServer } from '../experiment/testing/sim-wire-server.js';
import type { FakeServer } from '../models/testing/index.js';
import { DEMO_SESSION } from '../persona-drift/testing/small-config.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

/**
 * The memory and continuation audits behind an endpoint that always returns the same answer (the
 * persona audit: sanity.test.ts): the verdict is "not computable" with the reason in the JSON
 * report, the Markdown and the gate, never PASS.
 */
describe('memory and continuation behind an endpoint that always returns the same answer', () => {
  let server: FakeServer;
  const tmp = useTempDir('echolens-sanity-audits-');

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    // One fixed reply to everything, tool-using requests included: a mock left in place.
    server = await startSimWireServer({
      judge: 'sim:labeler',
      isJudge: (_messages, request) => request.body?.model === 'labeler',
      toolCall: () => ({ name: 'Bash', arguments: { command: 'ls' } }),
      target: () => '<step_1>Consider the options.</step_1>\n<step_2>Choose the first.</step_2>',
    });
  });
  afterAll(() => server?.close());

  async function expectNotComputable(db: string, model: string): Promise<void> {
    const json = JSON.parse((await runCliInProcess(['report', db, '--format', 'json'])).stdout) as {
      verdict: string;
      runs: Array<{ verdict: { verdict: string; notComputable?: string } }>;
    };
    expect(json.verdict).toBe('not computable');
    expect(json.runs[0]?.verdict.verdict).toBe('not computable');
    expect(json.runs[0]?.verdict.notComputable).toContain(model);
    expect(json.runs[0]?.verdict.notComputable).toMatch(/same answer/u);
    const md = await runCliInProcess(['report', db, '--format', 'md']);
    expect(md.stdout).toMatch(/\*\*Verdict: NOT COMPUTABLE\*\* — .*endpoint or cache problem/u);
    expect(md.stdout).not.toMatch(/Verdict: PASS/u);
    const gate = await runCliInProcess(['gate', db]);
    expect(gate.code).toBe(1);
    expect(gate.stdout).toMatch(/gate: NOT COMPUTABLE/u);
    expect(gate.stdout).toMatch(/answers-vary: not computable: .*same answer/u);
  }

  it('memory', async () => {
    const db = join(tmp.path, 'memory.db');
    const run = await runCliInProcess(smallMemoryRunArgs(`openai-compatible:stuck@${server.baseURL}`, `openai-compatible:labeler@${server.baseURL}`, db));
    expect(run.code, run.stderr).toBe(0);
    await expectNotComputable(db, 'openai-compatible:stuck');
  }, 120_000);

  it('continuation', async () => {
    const db = join(tmp.path, 'continuation.db');
    const run = await runCliInProcess(['continuation', 'run', '--session', DEMO_SESSION, '--target', `openai-compatible:stuck@${server.baseURL}`, '--db', db]);
    expect(run.code, run.stderr).toBe(0);
    await expectNotComputable(db, 'openai-compatible:stuck');
  }, 120_000);
});
