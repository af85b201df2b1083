import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { createAdapter } from '../models/create-adapter.js';
import { startSimWireServer } from '../experiment/testing/sim-wire-server.js';
import type { FakeServer } from '../models/testing/index.js';
import { DEMO_SESSION } from '../persona-drift/testing/small-config.js';
import { runCliInProcess } from './testing/run-cli.js';
import { reportAndGateSurfaces, smallMemoryRunArgs, ZERO_DOLLARS } from './testing/surfaces.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

/**
 * The memory and continuation audits with a target of no known price (an OpenAI-compatible
 * server's model): the dry run, the run's progress and summary, every report format and the gate
 * say the cost is unknown, and none prints $0 (the persona audit and the viewer:
 * unknown-cost.test.ts).
 */

function expectNoZeroDollars(outputs: Record<string, string>): void {
  for (const [surface, text] of Object.entries(outputs)) {
    expect(text.length, surface).toBeGreaterThan(0);
    expect(ZERO_DOLLARS.exec(text)?.[0] ?? null, `${surface} says $0`).toBeNull();
  }
}

function expectUnknownInJsonAndMarkdown(outputs: Record<string, string>): void {
  const json = JSON.parse(outputs['report json'] as string) as {
    runs: Array<{ accounting: { spendUsd: number | null; unpricedCells: number }; document: { cost: { usd: number | null } } }>;
  };
  expect(json.runs[0]?.accounting.spendUsd).toBeNull();
  expect(json.runs[0]?.accounting.unpricedCells).toBeGreaterThan(0);
  expect(json.runs[0]?.document.cost.usd).toBeNull();
  expect(outputs['report md']).toMatch(/unknown \(\d+ cells? without a known price\)/u);
  expect(outputs['report html']).toMatch(/unknown \(\d+ cells? without a known price\)/u);
}

describe('unknown cost in the memory and continuation audits is "unknown", never $0', () => {
  let server: FakeServer;
  const tmp = useTempDir('echolens-unpriced-audits-');

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    const memory = createAdapter('sim:memory');
    server = await startSimWireServer({
      // The labeler is unpriced too (sim:labeler's price is known: zero, and its stage would say $0.0000).
      judge: 'sim:labeler',
      isJudge: (_messages, request) => request.body?.model === 'unpriced-labeler',
      judgeSample: (request) => request.index,
      // A continuation cell: a call that varies with the request, so the answers are a model's.
      toolCall: (request) => ({ name: 'Bash', arguments: { command: `ls step-${request.index % 7}` } }),
      target: async (messages, request) => (await memory.generate({ model: 'sim:memory', messages, params: {}, sample: request.index })).text,
    });
  });
  afterAll(() => server?.close());

  it('memory: dry run, run, reports and gate', async () => {
    const db = join(tmp.path, 'memory.db');
    const args = smallMemoryRunArgs(`openai-compatible:unpriced-memory@${server.baseURL}`, `openai-compatible:unpriced-labeler@${server.baseURL}`, db);
    const outputs: Record<string, string> = {};
    const dry = await runCliInProcess([...args, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/cost ≈ unknown \(no price for: .*openai-compatible:unpriced-memory/u);
    outputs['dry run'] = dry.stdout + dry.stderr;
    const run = await runCliInProcess(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/spend unknown \(\d+ cells without a known price\)/u);
    expect(run.stderr).toMatch(/cost unknown/u);
    outputs.run = run.stdout + run.stderr;
    Object.assign(outputs, await reportAndGateSurfaces(db, tmp.path));
    expectUnknownInJsonAndMarkdown(outputs);
    expectNoZeroDollars(outputs);
  }, 120_000);

  it('continuation: dry run, run, reports and gate', async () => {
    const db = join(tmp.path, 'continuation.db');
    const args = ['continuation', 'run', '--session', DEMO_SESSION, '--target', `openai-compatible:unpriced-next@${server.baseURL}`, '--db', db];
    const outputs: Record<string, string> = {};
    const dry = await runCliInProcess([...args, '--dry-run']);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stdout).toMatch(/cost ≈ unknown \(no price for: openai-compatible:unpriced-next/u);
    outputs['dry run'] = dry.stdout + dry.stderr;
    const run = await runCliInProcess(args);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout + run.stderr).toMatch(/(?:spend|cost) unknown/u);
    outputs.run = run.stdout + run.stderr;
    Object.assign(outputs, await reportAndGateSurfaces(db, tmp.path));
    expectUnknownInJsonAndMarkdown(outputs);
    expectNoZeroDollars(outputs);
  }, 120_000);

  it('the pattern catches what it must', () => {
    for (const zero of ['$0', 'spend $0.0000;', '$0.00 – $0.00']) expect(zero).toMatch(ZERO_DOLLARS);
    for (const priced of ['$0.0123', '$0.5', '$10.00', '$1']) expect(priced).not.toMatch(ZERO_DOLLARS);
  });
});
