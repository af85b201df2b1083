import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FakeRequest, type FakeServer, startFakeOpenAI } from '../../models/testing/index.js';
import { DEMO_SESSION } from '../../persona-drift/testing/small-config.js';
import { runCliInProcess } from '../testing/run-cli.js';

/**
 * Drift over time end to end (issue 43): an OpenAI-compatible endpoint on 127.0.0.1 whose model
 * changes between two measurements. Before: the same register whatever the context. After: in the
 * real session's context (its transcript names the `tally` project) the answers take a human
 * register that sim:judge scores 0, so the drift gap (filler − real) grows at every position.
 */

const HEDGED = "As an AI assistant, I don't have personal tastes; I can describe common preferences.";
const FIGURE = "That's a figure of speech for me; I don't have feelings, but I can help.";
const HUMAN = 'I love long walks and my favourite food is ramen.';

/** A deterministic wobble per request, so positions differ a little within each measurement. */
const wobble = (request: FakeRequest) => {
  const text = JSON.stringify(request.body?.messages ?? []);
  let h = 2166136261;
  for (let i = 0; i < text.length; i += 7) h = Math.imul(h ^ text.charCodeAt(i), 16777619) >>> 0;
  return h % 5 === 0;
};
const before = (request: FakeRequest) => ({ text: wobble(request) ? FIGURE : HEDGED, model: 'm-2025-01', systemFingerprint: 'fp_old' });
const after = (request: FakeRequest) => {
  const real = JSON.stringify(request.body?.messages ?? []).includes('tally');
  return { text: real && !wobble(request) ? HUMAN : HEDGED, model: 'm-2025-06', systemFingerprint: 'fp_new' };
};

let dir: string;
let server: FakeServer;
let db: string;
let args: string[];
beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'echolens-history-'));
  db = join(dir, 'runs.db');
  server = await startFakeOpenAI({ respond: before });
  args = [
    'persona',
    'run',
    '--session',
    DEMO_SESSION,
    '--target',
    `openai-compatible:m@${server.baseURL}`,
    '--judge',
    'sim:judge',
    '--set',
    'positions=[{uniform: 8}]',
    '--set',
    'probes={categories: [coding_self], paraphrases: 2}',
    '--db',
    db,
  ];
});
afterAll(() => {
  server.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('drift over time: measure, re-measure, compare with the baseline, gate', () => {
  it('re-measures with --fresh after the endpoint changed, lists both runs, reports the shift (p < 0.05) and fails the gate', async () => {
    const first = await runCliInProcess(args);
    expect(first.code, first.stderr).toBe(0);
    const firstRequests = server.requests.length;
    expect(firstRequests).toBeGreaterThan(0);

    // A plain re-run resumes the measurement: nothing is sent.
    const again = await runCliInProcess(args);
    expect(again.code, again.stderr).toBe(0);
    expect(server.requests.length).toBe(firstRequests);

    // The model behind the alias changes; a fresh measurement asks every cell again.
    server.setRespond(after);
    const dry = await runCliInProcess([...args, '--fresh', '--dry-run']);
    expect(dry.stdout).toContain('--fresh: a new measurement calls every cell again');
    const fresh = await runCliInProcess([...args, '--fresh', '--tag', 'after-update']);
    expect(fresh.code, fresh.stderr).toBe(0);
    expect(server.requests.length).toBe(2 * firstRequests);
    // And a plain re-run now resumes the fresh measurement: again nothing is sent.
    await runCliInProcess(args);
    expect(server.requests.length).toBe(2 * firstRequests);

    const history = await runCliInProcess(['history', db, '--json']);
    expect(history.code, history.stderr).toBe(0);
    const { designs } = JSON.parse(history.stdout) as {
      designs: Array<{
        runs: Array<{ run: string; tag: string | null; modelChanged: boolean; models: Record<string, string[]>; headlines: Array<{ estimate: number }> }>;
      }>;
    };
    expect(designs).toHaveLength(1);
    const runs = designs[0]?.runs ?? [];
    expect(runs).toHaveLength(2);
    expect(runs[1]?.tag).toBe('after-update');
    const [e0, e1] = runs.map((r) => r.headlines[0]?.estimate as number);
    expect(Math.abs((e1 as number) - (e0 as number))).toBeGreaterThan(1);
    expect(Object.values(runs[0]?.models ?? {}).flat()).toContain('m-2025-01 (fp_old)');
    expect(Object.values(runs[1]?.models ?? {}).flat()).toContain('m-2025-06 (fp_new)');
    expect(runs.map((r) => r.modelChanged)).toEqual([false, true]);
    const listed = JSON.parse((await runCliInProcess(['runs', 'list', db, '--json'])).stdout) as Array<{ id: string; design: string; tag: string | null }>;
    expect(new Set(listed.map((r) => r.design)).size).toBe(1);
    expect(listed.map((r) => r.tag).sort()).toEqual(['after-update', null]);
    const text = await runCliInProcess(['history', db]);
    expect(text.stdout).toContain('model version changed since the previous measurement');

    const compare = await runCliInProcess(['compare', db, '--baseline', 'first', '--json']);
    expect(compare.code, compare.stderr).toBe(0);
    const { comparisons } = JSON.parse(compare.stdout) as {
      comparisons: Array<{ rows: Array<{ change: { estimate: number; p: number; ci: [number, number] }; units: number }> }>;
    };
    const row = comparisons[0]?.rows[0];
    expect(row?.units).toBe(8);
    expect(row?.change.estimate).toBeGreaterThan(1);
    expect(row?.change.p).toBeLessThan(0.05);
    expect(row?.change.ci[0]).toBeGreaterThan(0);
    const byTag = await runCliInProcess(['compare', db, '--baseline', 'first', '--against', 'after-update']);
    expect(byTag.stdout).toMatch(/p = 0\.0\d\d/);

    const gate = await runCliInProcess(['gate', db, '--baseline', 'first']);
    expect(gate.code, gate.stdout).toBe(1);
    // The same change passes when the team allows changes of up to 3 judge points.
    const loose = await runCliInProcess(['gate', db, '--baseline', 'first', '--max-change', '3', '--json']);
    expect(loose.code, loose.stdout).toBe(0);
    expect(JSON.parse(loose.stdout).checks[0].status).toBe('pass');
  }, 240_000);

  it('a design measured once passes the baseline gate with a skipped check (a scheduled job’s first run); compare refuses it', async () => {
    const one = join(dir, 'one.db');
    const run = await runCliInProcess([...args.slice(0, 5), 'sim:persona', '--judge', 'sim:judge', '--set', 'positions=[{uniform: 2}]', '--db', one]);
    expect(run.code, run.stderr).toBe(0);
    const gate = await runCliInProcess(['gate', one, '--baseline', 'first', '--json']);
    expect(gate.code, gate.stdout).toBe(0);
    expect(JSON.parse(gate.stdout).checks).toEqual([expect.objectContaining({ status: 'skipped', name: 'max-change' })]);
    const compare = await runCliInProcess(['compare', one, '--baseline', 'first']);
    expect(compare.code).toBe(2);
    expect(compare.stderr).toContain('one measurement only');
  });

  it('refuses a baseline that names nothing, and --against without --baseline (exit 2)', async () => {
    const none = await runCliInProcess(['compare', db, '--baseline', 'no-such-tag']);
    expect(none.code).toBe(2);
    expect(none.stderr).toContain('no-such-tag');
    const against = await runCliInProcess(['gate', db, '--against', 'latest']);
    expect(against.code).toBe(2);
  });
});
