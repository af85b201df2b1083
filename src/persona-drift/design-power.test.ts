import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { personaDesignPower, personaPowerLine } from './design-power.js';
import { personaArgs } from '../cli/testing/persona-args.js';

describe('persona design power (pure)', () => {
  it('gives the MDE and power of the default design (12 positions × 5 probes) and what reaches 80%', () => {
    const p = personaDesignPower({ sessions: 1, positionsPerSession: 12, responsesPerCell: 5, targets: 1 });
    // σ² = 0.2² + 2·0.7²/5 = 0.236; SE = √(0.236/12) = 0.1402; MDE = (t.975,11 + t.8,11)·SE = (2.2010 + 0.8755)·0.1402.
    expect(p.mde).toBeCloseTo(3.0765 * Math.sqrt(0.236 / 12), 3);
    expect(p.power).toBeGreaterThan(0.45);
    expect(p.power).toBeLessThan(0.55);
    expect(p.needed).toBe(23);
    expect(personaPowerLine(p, 0.3)).toMatch(/UNDERPOWERED — about 23 positions/u);
    const enough = personaDesignPower({ sessions: 1, positionsPerSession: 24, responsesPerCell: 5, targets: 1 });
    expect(enough.power).toBeGreaterThan(0.8);
    expect(personaPowerLine(enough, 0.3)).toMatch(/adequately powered/u);
  });

  it('refuses designs whose test cannot reject, saying what to add', () => {
    expect(personaPowerLine(personaDesignPower({ sessions: 1, positionsPerSession: 4, responsesPerCell: 5, targets: 1 }), 0.3)).toMatch(
      /UNDERPOWERED — 4 positions: the sign-flip test cannot reach p < 0.05 below 6 units/u,
    );
    expect(personaPowerLine(personaDesignPower({ sessions: 3, positionsPerSession: 12, responsesPerCell: 5, targets: 1 }), 0.3)).toMatch(
      /no session-level claim is possible below 6 sessions/u,
    );
  });

  it('Holm across targets: more targets, lower per-test α, less power', () => {
    const one = personaDesignPower({ sessions: 1, positionsPerSession: 24, responsesPerCell: 5, targets: 1 });
    const three = personaDesignPower({ sessions: 1, positionsPerSession: 24, responsesPerCell: 5, targets: 3 });
    expect(three.power as number).toBeLessThan(one.power as number);
  });
});

describe("the README's one-command persona design", () => {
  beforeAll(() => registerBuiltinSimProfiles());
  it('dry run prints its MDE and power and says UNDERPOWERED with what to add', async () => {
    const dry = await runCliInProcess([
      ...personaArgs({ targets: ['openai:gpt-4.1-mini'], judges: ['anthropic:claude-sonnet-4-5'], db: '/nonexistent/never-written.db' }),
      '--dry-run',
    ]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(
      /power: drift gap over 12 positions → minimum detectable \|Δ\| ≈ 0\.43 at 80% power, power 0\.50 at \|Δ\| = 0\.3 \(strong drift\).*UNDERPOWERED — about 23 positions/u,
    );
  });
});
