import { describe, expect, it } from 'vitest';
import { calibrateContinuation, simulateObservations } from './calibrate.js';
import { CONTINUATION_NULL_SIM } from './sim.js';

/**
 * `continuation calibrate --blocks k --repeat ρ [--declare-blocks]`: simulated runs whose
 * neighbouring cutpoints repeat one answer. The 2,000-replicate figures are in
 * docs/statistics.md (dependent-cutpoints.slow.test.ts).
 */

describe('continuation calibrate with dependent cutpoints', () => {
  it('a repeated cutpoint carries its run’s first answers in every arm', () => {
    const obs = simulateObservations(CONTINUATION_NULL_SIM, { cutpoints: 10, replicates: 1, blocks: { size: 5, repeat: 1, declared: false } }, 0);
    const key = (o: (typeof obs)[number]) => `${o.arm}|${o.status}|${o.fidelity}|${o.sameTask}`;
    const of = (cut: string) => obs.filter((o) => o.cutpoint === cut).map(key);
    for (const cut of ['C02', 'C03', 'C04', 'C05']) expect(of(cut)).toEqual(of('C01'));
    for (const cut of ['C07', 'C08', 'C09', 'C10']) expect(of(cut)).toEqual(of('C06'));
    const fresh = simulateObservations(CONTINUATION_NULL_SIM, { cutpoints: 10, replicates: 1, blocks: { size: 5, repeat: 0, declared: false } }, 0);
    expect(new Set(fresh.filter((o) => o.arm === 'recent').map((o) => `${o.status}|${o.fidelity}|${o.sameTask}`)).size).toBeGreaterThan(1);
  });

  it('declared blocks make the runs the units; bad blocks are refused', () => {
    const declared = calibrateContinuation(CONTINUATION_NULL_SIM, { cutpoints: 50, replicates: 20, blocks: { size: 5, repeat: 0.6, declared: true } });
    expect(declared.design.blocks).toEqual({ size: 5, repeat: 0.6, declared: true });
    expect(declared.tests.map((t) => t.test)).toEqual(['recent-cross/completeCase', 'recent-cross/itt']);
    expect(() => calibrateContinuation(CONTINUATION_NULL_SIM, { cutpoints: 10, replicates: 1, blocks: { size: 1, repeat: 0.5, declared: true } })).toThrow(
      /blocks/,
    );
    expect(() => calibrateContinuation(CONTINUATION_NULL_SIM, { cutpoints: 10, replicates: 1, blocks: { size: 5, repeat: 2, declared: true } })).toThrow(
      /blocks/,
    );
  });
});
