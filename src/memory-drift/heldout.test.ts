import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { createAdapter } from '../models/create-adapter.js';
import { type FakeServer, startFakeOpenAI } from '../models/testing/index.js';
import type { ChatMessage } from '../models/types.js';
import { createMemorySimProfile, readLabelerPrompt } from './sim.js';

/**
 * The held-out check, in small: `memory run` + `memory report --format json` through the
 * CLI at the default config (only targets, labeler, seed, the first 30 questions — the minimum
 * design — and B changed), against a local OpenAI-compatible server that honours seeds like a
 * seeded vLLM (same seed + same prompt = same answer) and a seeded labeler. SIMULATION: the
 * target is a sim profile behind the wire, under a complete null or with planted tiers.
 */

const dir = mkdtempSync(join(tmpdir(), 'echolens-heldout-'));

interface ReportJson {
  targets: Array<{
    metrics: Record<
      string,
      {
        conditions: Array<{ condition: string; elevation: { p: number } | null }>;
        mixedModel: { fixed: Array<{ term: string; p: number }> } | { error: string };
        dRel: Array<{ condition: string; result: { p: number; pAdjusted: number; significant: boolean } | { error: string } }>;
      }
    >;
  }>;
}

/** Every per-condition p-value the report lists (elevation, mixed-model fixed effects, d_rel) for one metric. */
function perConditionPs(report: ReportJson, metric: string): number[] {
  const m = report.targets[0]!.metrics[metric]!;
  const ps = m.conditions.flatMap((c) => (c.elevation === null ? [] : [c.elevation.p]));
  if ('fixed' in m.mixedModel) ps.push(...m.mixedModel.fixed.filter((f) => f.term !== '(Intercept)' && f.term !== 'intercept').map((f) => f.p));
  for (const d of m.dRel) if ('p' in d.result) ps.push(d.result.p);
  return ps;
}

describe('held-out check: memory run + memory report --format json through a seeded local server', { timeout: 900_000 }, () => {
  let server: FakeServer;
  let planted = false;
  beforeAll(async () => {
    registerBuiltinSimProfiles();
    const nullTarget = createMemorySimProfile({ name: 'heldout-null', seedHonouring: true, ignorePerturbations: true });
    const plantedTarget = createMemorySimProfile({ name: 'heldout-planted', seedHonouring: true });
    const labeler = createAdapter('sim:labeler');
    server = await startFakeOpenAI({
      respond: async (request) => {
        const messages = (request.body?.messages ?? []) as ChatMessage[];
        if (readLabelerPrompt(messages) !== null) return { text: (await labeler.generate({ model: 'sim:labeler', messages, params: {}, sample: 0 })).text };
        const seed = Number(request.body?.seed);
        if (!Number.isInteger(seed)) return { status: 400, error: 'the held-out sampler needs a seed' };
        const target = planted ? plantedTarget : nullTarget;
        return { text: target.answer({ model: 'wire', messages, params: { seed }, sample: 0 }, seed).text };
      },
    });
  });
  afterAll(() => server.close());

  const runOnce = async (name: string, seed: number): Promise<ReportJson> => {
    const file = join(dir, `${name}.yaml`);
    writeFileSync(
      file,
      [
        `targets: ["openai-compatible:seeded@${server.baseURL}"]`,
        `labeler: "openai-compatible:seeded-labeler@${server.baseURL}"`,
        `seed: ${seed}`,
        'questions: { limit: 30 }',
        'analysis: { B: 1000 }',
      ].join('\n'),
    );
    const db = join(dir, `${name}.db`);
    const run = await runCliInProcess(['memory', 'run', file, '--db', db]);
    expect(run.code, run.stderr).toBe(0);
    const report = await runCliInProcess(['memory', 'report', db, '--format', 'json']);
    expect(report.code, report.stderr).toBe(0);
    return JSON.parse(report.stdout) as ReportJson;
  };

  it('keeps the report keys; under the null few tests fall below 0.05 and no d_rel is BH-significant; a planted effect is detected', async () => {
    const nullRuns: ReportJson[] = [];
    for (const seed of [11, 12, 13, 14]) nullRuns.push(await runOnce(`null-${seed}`, seed));
    const first = nullRuns[0]!.targets[0]!.metrics.dtw!;
    // The keys the held-out check reads.
    expect(first.conditions.some((c) => c.elevation !== null && typeof c.elevation.p === 'number')).toBe(true);
    expect('fixed' in first.mixedModel && first.mixedModel.fixed.every((f) => typeof f.p === 'number')).toBe(true);
    const d = first.dRel.find((x) => 'p' in x.result)!.result as { p: number; pAdjusted: number; significant: boolean };
    expect(typeof d.p).toBe('number');
    expect(typeof d.pAdjusted).toBe('number');
    expect(typeof d.significant).toBe('boolean');

    const ps = nullRuns.flatMap((r) => [...perConditionPs(r, 'dtw'), ...perConditionPs(r, 'sri')]);
    const share = ps.filter((p) => p < 0.05).length / ps.length;
    const bhRuns = nullRuns.filter((r) =>
      ['dtw', 'sri'].some((m) => r.targets[0]!.metrics[m]!.dRel.some((x) => 'significant' in x.result && x.result.significant)),
    ).length;
    process.stdout.write(
      `held-out null: ${ps.length} per-condition tests over ${nullRuns.length} runs, share p < 0.05 = ${share.toFixed(4)}; runs with a BH-significant d_rel: ${bhRuns}\n`,
    );
    expect(share).toBeLessThanOrEqual(0.08);
    expect(bhRuns).toBeLessThanOrEqual(1);

    planted = true;
    const effect = await runOnce('planted', 21);
    const dtw = effect.targets[0]!.metrics.dtw!;
    const significant = dtw.dRel.filter((x) => 'significant' in x.result && x.result.significant).map((x) => x.condition);
    const lifeElevation = dtw.conditions.filter((c) => ['bereavement', 'job_loss', 'serious_illness', 'divorce'].includes(c.condition));
    process.stdout.write(`held-out planted: BH-significant d_rel (dtw) ${significant.length} of ${dtw.dRel.length}: ${significant.join(', ')}\n`);
    expect(significant.length).toBeGreaterThan(0);
    expect(lifeElevation.every((c) => c.elevation !== null && c.elevation.p < 0.05)).toBe(true);
  });
});
