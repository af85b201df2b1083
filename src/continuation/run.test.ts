import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { createAdapter } from '../models/create-adapter.js';
import { useFakeProviders } from '../models/testing/harness.js';
import type { FakeRequest } from '../models/testing/index.js';
import { readSession } from '../sessions/read.js';
import { openStore } from '../store/run-store.js';
import { type ContinuationConfig, continuationConfigSchema } from './config.js';
import { renderContinuationMarkdown } from './document.js';
import { continuationReport, planAndPrime, runContinuation } from './run.js';
import { armOfRequest, CONTINUATION_SIM, plantedGain, simTruthFor } from './sim.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

registerBuiltinSimProfiles();

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CODEX = join(packageRoot(), 'src', 'continuation', '__fixtures__', 'codex-ledger.jsonl');
const KEY = 'sk-test-SECRET-0123456789';

const tmp = useTempDir('echolens-continuation-', 'test');

function config(extra: Record<string, unknown>): ContinuationConfig {
  return continuationConfigSchema.parse({ session: DEMO, targets: ['sim:continuation'], ...extra });
}

describe('continuation audit on simulated targets', () => {
  it('every cell of the plan is the arm it says it is (what the simulation sees); tools and tool choice are on every request', async () => {
    const cfg = config({ crossSession: CODEX });
    const session = await readSession(DEMO);
    const cross = await readSession(CODEX);
    const plan = planAndPrime(cfg, session, cross);
    expect(plan.specs).toHaveLength(100);
    for (const spec of plan.specs) {
      const known = simTruthFor(spec.request.messages.at(-1)!.content)!;
      const truth = plan.arms.find((a) => a.cutpoint.id === spec.labels.cutpoint)!;
      expect(known.truth).toEqual(truth.cutpoint.groundTruth);
      expect(armOfRequest(spec.request, known)).toBe(spec.labels.arm);
      expect(spec.request.tools!.map((t) => t.name)).toEqual(['Bash', 'Edit', 'Read']);
      expect(spec.request.toolChoice).toBe('auto');
    }
  });

  it('runs end to end on the demo transcript; the report recovers the planted gain in sign and size', async () => {
    const db = join(tmp.path, 'run.db');
    const cfg = config({ crossSession: CODEX, decoding: { seed: 1 } });
    const result = await runContinuation(cfg, db, { progress: false });
    expect(result.interrupted).toBe(false);
    const store = openStore(db, { readonly: true });
    const report = await continuationReport(store, result.runId, { resamples: 20_000 });
    await store.close();
    expect(report.simulated).toBe(true);
    const target = report.analysis.targets[0]!;
    expect(target.cutpoints).toBe(25);
    const primary = target.contrasts.find((c) => c.primary)!;
    const planted = plantedGain(CONTINUATION_SIM, 'recent', 'cross');
    // Sign and size: the estimate is positive and its 95% interval covers the planted gain.
    expect(primary.completeCase.mean!).toBeGreaterThan(0);
    expect(primary.completeCase.ci![0]).toBeLessThanOrEqual(planted.completeCase);
    expect(primary.completeCase.ci![1]).toBeGreaterThanOrEqual(planted.completeCase);
    expect(primary.itt.ci![0]).toBeLessThanOrEqual(planted.itt);
    expect(primary.itt.ci![1]).toBeGreaterThanOrEqual(planted.itt);
    expect(primary.itt.n).toBe(25);
    expect(target.attrition.map((a) => a.attempted)).toEqual([25, 25, 25, 25]);
    const json = JSON.parse(JSON.stringify(report));
    expect(Object.keys(json.analysis.targets[0].contrasts[0])).toEqual(expect.arrayContaining(['completeCase', 'itt', 'strata']));
    expect(renderContinuationMarkdown(report)).toMatch(/Simulated targets/);
  });
});

describe('continuation audit through the fake OpenAI and Anthropic servers (native tool calling)', () => {
  const fakes = useFakeProviders(KEY);
  const adapterFor = (ref: string) => createAdapter(ref, { env: { OPENAI_API_KEY: KEY, ANTHROPIC_API_KEY: KEY }, timeoutMs: 30_000 });

  it('Claude Code demo transcript → OpenAI-compatible server: tools / tool_calls on the wire, calls scored, prose and malformed counted', async () => {
    // Answers by request order: a correct Read, a Bash with a different command, prose, malformed arguments.
    const replies = [
      { toolCalls: [{ name: 'Read', arguments: { file_path: '/home/dev/projects/tally/src/parse.ts' } }] },
      { toolCalls: [{ name: 'Bash', arguments: { command: 'npm test -- totals' } }] },
      { text: 'I would run the tests next.' },
      { toolCalls: [{ name: 'Bash', arguments: '{"command": "npm' }] },
    ];
    fakes.openai.setRespond((request: FakeRequest) => replies[request.index % replies.length]!);
    const start = fakes.openai.requests.length;
    const ref = `openai:gpt-4.1-mini@${fakes.openai.baseURL}`;
    const cfg = config({ targets: [ref], cutpoints: { count: 6 } });
    const db = join(tmp.path, 'wire.db');
    const result = await runContinuation(cfg, db, { progress: false, adapterFor, concurrency: 1 });
    const sent = fakes.openai.requests.slice(start);
    expect(sent).toHaveLength(24);
    for (const r of sent) {
      const tools = r.body!.tools as Array<{ type: string; function: { name: string; parameters: { type: string } } }>;
      expect(tools.map((t) => t.function.name)).toEqual(['Bash', 'Edit', 'Read']);
      expect(tools[0]!.function.parameters.type).toBe('object');
      expect(r.body!.tool_choice).toBe('auto');
    }
    const store = openStore(db, { readonly: true });
    const report = await continuationReport(store, result.runId);
    await store.close();
    expect(report.simulated).toBe(false);
    const statuses = report.cells.map((c) => c.score.status);
    expect(statuses.filter((s) => s === 'call')).toHaveLength(12);
    expect(statuses.filter((s) => s === 'prose')).toHaveLength(6);
    expect(statuses.filter((s) => s === 'unparseable')).toHaveLength(6);
    const total = report.analysis.targets[0]!.attrition.reduce((n, a) => n + a.calls + a.prose + a.unparseable, 0);
    expect(total).toBe(24);
  });

  it('Codex transcript → Anthropic server: tools / tool_use on the wire; a re-run after a stop repeats no call', async () => {
    let calls = 0;
    const controller = new AbortController();
    fakes.anthropic.setRespond(() => {
      calls += 1;
      if (calls === 10) controller.abort();
      return { toolCalls: [{ name: 'shell', arguments: { command: ['bash', '-lc', 'python -m pytest -q'], workdir: '/home/dev/ledger' } }] };
    });
    const start = fakes.anthropic.requests.length;
    const ref = `anthropic:claude-sonnet-4-5@${fakes.anthropic.baseURL}`;
    const cfg = continuationConfigSchema.parse({ session: CODEX, crossSession: DEMO, targets: [ref], cutpoints: { count: 8 }, windowTokens: 300 });
    const db = join(tmp.path, 'resume.db');
    const first = await runContinuation(cfg, db, { progress: false, adapterFor, concurrency: 1, signal: controller.signal });
    expect(first.interrupted).toBe(true);
    const afterFirst = fakes.anthropic.requests.length - start;
    expect(afterFirst).toBeLessThan(32);
    const second = await runContinuation(cfg, db, { progress: false, adapterFor, concurrency: 1 });
    expect(second.resumed).toBe(true);
    expect(second.interrupted).toBe(false);
    const sent = fakes.anthropic.requests.slice(start);
    // Every cell was called exactly once across both runs.
    expect(sent).toHaveLength(32);
    expect(new Set(sent.map((r) => r.rawBody)).size).toBe(32);
    const body = sent[0]!.body!;
    expect((body.tools as Array<{ name: string }>).map((t) => t.name)).toEqual(['apply_patch', 'shell']);
    const store = openStore(db, { readonly: true });
    const report = await continuationReport(store, second.runId);
    await store.close();
    const shellCells = report.cells.filter((c) => report.cutpoints.find((p) => p.id === c.cutpoint)!.groundTruth.name === 'shell');
    expect(shellCells.length).toBeGreaterThan(0);
    for (const c of shellCells) expect(c.score.nameMatch).toBe(true);
    expect(report.cells.every((c) => c.score.status === 'call')).toBe(true);
    // A third run calls nothing.
    await runContinuation(cfg, db, { progress: false, adapterFor, concurrency: 1 });
    expect(fakes.anthropic.requests.length - start).toBe(32);
  });
});
