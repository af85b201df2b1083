import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { closestNames, didYouMean, typoDistance } from '../core/suggest.js';
import type { PlanEstimate } from '../models/estimate.js';
import { assertPreflight, PreflightError, preflightProblems, suggestedBudget } from './preflight.js';

registerBuiltinSimProfiles();
const dir = mkdtempSync(join(tmpdir(), 'echolens-preflight-'));

function estimate(low: number, high: number, unpricedModels: string[] = []): PlanEstimate {
  return {
    cells: 10,
    duplicates: 0,
    inputTokens: 1000,
    outputTokens: { expected: 100, max: 200 },
    dollars: { low, high },
    unpricedCells: unpricedModels.length,
    unpricedModels,
    perModel: [],
  };
}

describe('did you mean', () => {
  it('measures typos with transpositions', () => {
    expect(typoDistance('persona', 'persona')).toBe(0);
    expect(typoDistance('persna', 'persona')).toBe(1);
    expect(typoDistance('opneai', 'openai')).toBe(1);
    expect(typoDistance('', 'abc')).toBe(3);
  });

  it('suggests only plausible names', () => {
    expect(closestNames('persna', ['persona', 'judge', 'memory'])).toEqual(['persona']);
    expect(closestNames('zzzzzz', ['persona', 'judge'])).toEqual([]);
    expect(didYouMean('antropic', ['anthropic', 'openai'])).toBe(' (did you mean "anthropic"?)');
    expect(didYouMean('qqq', ['anthropic'])).toBe('');
  });
});

describe('preflightProblems', () => {
  it('lists every problem at once: typo, unknown provider, missing key, missing file', () => {
    const problems = preflightProblems({
      models: [
        { ref: 'sim:persna', field: 'targets.0' },
        { ref: 'opneai:gpt-4.1-mini', field: 'targets.1' },
        { ref: 'openai:gpt-4.1-mini', field: 'judges.0' },
        { ref: 'sim:judge', field: 'judges.1' },
      ],
      files: [{ path: join(dir, 'absent.jsonl'), field: 'sessions.0' }],
      env: {},
    });
    expect(problems.map((p) => p.field)).toEqual(['targets.0', 'targets.1', 'judges.0', 'sessions.0']);
    expect(problems[0]?.message).toMatch(/no simulation profile "persna" \(did you mean "persona"\?\)/);
    expect(problems[1]?.message).toMatch(/unknown provider "opneai".*did you mean "openai"/);
    expect(problems[2]?.message).toMatch(/OPENAI_API_KEY/);
    expect(problems[3]?.message).toMatch(/no such file/);
  });

  it('passes when references resolve, keys are set and files exist', () => {
    const file = join(dir, 'present.txt');
    writeFileSync(file, 'x');
    expect(
      preflightProblems({
        models: [
          { ref: 'openai:gpt-4.1-mini', field: 'targets.0' },
          { ref: 'sim:persona', field: 'targets.1' },
        ],
        files: [{ path: file, field: 'sessions.0' }],
        env: { OPENAI_API_KEY: 'sk-test' },
      }),
    ).toEqual([]);
  });

  it('skips the key check when asked (an injected adapter factory) but not the reference check', () => {
    const problems = preflightProblems({
      models: [
        { ref: 'openai:gpt-4.1-mini', field: 'targets.0' },
        { ref: 'sim:nope-nope', field: 'targets.1' },
      ],
      env: {},
      skipKeys: true,
    });
    expect(problems.map((p) => p.field)).toEqual(['targets.1']);
  });

  it('names a replay store that does not exist', () => {
    const problems = preflightProblems({ models: [{ ref: `replay:${join(dir, 'none.db')}`, field: 'targets.0' }], env: {} });
    expect(problems[0]?.message).toMatch(/no such run store/);
  });

  it('refuses a grid whose expected cost exceeds the budget, naming the budget and a budget that fits', () => {
    const problems = preflightProblems({ models: [], estimate: estimate(30.2, 58.7), maxCostUsd: 10 });
    expect(problems).toHaveLength(1);
    expect(problems[0]?.message).toMatch(/\$30\.20 – \$58\.70, over the budget --max-cost \$10/);
    expect(problems[0]?.hint).toMatch(/raise --max-cost to \$60/);
    expect(preflightProblems({ models: [], estimate: estimate(8, 12), maxCostUsd: 10 })).toEqual([]);
    expect(preflightProblems({ models: [], estimate: estimate(30, 40) })).toEqual([]);
  });

  it('refuses a budget it cannot enforce (a model without a price)', () => {
    const problems = preflightProblems({ models: [], estimate: estimate(0, 0, ['vllm:x']), maxCostUsd: 5 });
    expect(problems[0]?.message).toMatch(/no price is known for vllm:x/);
  });

  it('assertPreflight throws one error listing all problems', () => {
    let caught: unknown;
    try {
      assertPreflight({ models: [{ ref: 'sim:persna', field: 'targets.0' }], files: [{ path: join(dir, 'x'), field: 'sessions.0' }], env: {} });
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(PreflightError);
    const e = caught as PreflightError;
    expect(e.problems).toHaveLength(2);
    expect(e.message).toMatch(/2 problems; nothing was called and no run was recorded/);
    expect(e.message).toMatch(/targets\.0: .*\n.*sessions\.0: /);
  });

  it('rounds a suggested budget up past the estimate', () => {
    expect(suggestedBudget(estimate(0.01, 0.0312))).toBe('0.04');
    expect(suggestedBudget(estimate(1, 3.2))).toBe('3.5');
    expect(suggestedBudget(estimate(30, 58.7))).toBe('60');
    expect(suggestedBudget(estimate(100, 401))).toBe('450');
  });
});
