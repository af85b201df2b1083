import { describe, expect, it } from 'vitest';
import { calibratePersona } from './calibrate.js';
import { BASE_DESIGN } from './calibrate-designs.js';
import { personaDesignPower } from './design-power.js';

/**
 * The dry run's analytic power figures against `persona calibrate`'s simulation of the same
 * design (the report's own analysis on simulated scores): MDE and power at |Δ| = 0.30 agree
 * within Monte Carlo error, for one session (positions are units) and for several sessions.
 */
describe('persona design power (analytic) agrees with persona calibrate (simulated)', () => {
  const cases = [
    { name: '1 session × 12 positions, 5 probes', design: { ...BASE_DESIGN, probes: BASE_DESIGN.probes.slice(0, 5) } },
    { name: '1 session × 24 positions, 5 probes', design: { ...BASE_DESIGN, positionsPerSession: 24, probes: BASE_DESIGN.probes.slice(0, 5) } },
    { name: '8 sessions × 4 positions, 10 probes', design: { ...BASE_DESIGN, sessions: 8, positionsPerSession: 4 } },
  ];
  for (const { name, design } of cases) {
    it(name, () => {
      const simulated = calibratePersona(design, { replicates: 400, seed: 7, worlds: ['drift'] });
      const drift = simulated.tests.find((t) => t.test.startsWith('drift target='));
      expect(drift?.power).not.toBeNull();
      const analytic = personaDesignPower({
        sessions: design.sessions,
        positionsPerSession: design.positionsPerSession,
        responsesPerCell: design.probes.length * design.paraphrases * design.samples,
        targets: 1,
      });
      const power = drift?.power as { rate: number; mcSE: number };
      // Within 3 Monte Carlo SEs (the sign-flip test is not exactly the t test the formula assumes).
      expect(Math.abs((analytic.power as number) - power.rate)).toBeLessThan(3 * power.mcSE + 0.02);
      expect(Math.abs((analytic.mde as number) - (drift?.mde as number))).toBeLessThan(0.03);
    }, 120_000);
  }
});
