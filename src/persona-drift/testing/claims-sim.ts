import { rng } from '../../stats/rng.js';
import { analyzePersona } from '../analysis.js';
import type { PersonaObservation } from '../analysis-types.js';
import { personaGateChecks } from '../gate.js';
import { normalDraws } from '../../stats/testing/normal.js';

/**
 * Seeded persona designs for the "one procedure per claim" checks (test support, not shipped):
 * several targets and judges, sessions of two harnesses, mitigations and a placebo, so that
 * every family the report adjusts (Holm across targets, across mitigation tests) and every
 * further analysis (consensus, harness) has claims to check.
 */

export interface ClaimsDesign {
  targets: number;
  judges: number;
  sessions: number;
  positions: number;
  probes: number;
  /** Planted drift per target (filler − real), in judge points; missing entries are 0. */
  drift: readonly number[];
  /** SD of the session effect on the drift gap. */
  sessionSd: number;
}

export const CLAIMS_DESIGN: ClaimsDesign = { targets: 3, judges: 2, sessions: 8, positions: 3, probes: 3, drift: [0, 0, 0.35], sessionSd: 0.25 };

export function claimsObservations(
  seed: number,
  design: ClaimsDesign = CLAIMS_DESIGN,
): { observations: PersonaObservation[]; harnesses: Record<string, 'claude-code' | 'codex'> } {
  const random = rng(seed);
  const normal = normalDraws(random);
  const observations: PersonaObservation[] = [];
  const harnesses: Record<string, 'claude-code' | 'codex'> = {};
  const judges = Array.from({ length: design.judges }, (_, j) => `judge-${j + 1}`);
  for (let s = 0; s < design.sessions; s++) harnesses[`S${s + 1}`] = s % 2 === 0 ? 'claude-code' : 'codex';
  for (let t = 0; t < design.targets; t++) {
    const target = `sim:t${t + 1}`;
    const drift = design.drift[t] ?? 0;
    for (let s = 0; s < design.sessions; s++) {
      const session = `S${s + 1}`;
      const sessionDrift = drift + design.sessionSd * normal();
      const anchorEffect = 0.15 * normal();
      for (let p = 0; p < design.positions; p++) {
        const positionDrift = sessionDrift + 0.2 * normal();
        const cells: Array<{ arm: string; mitigation: string; shift: number }> = [
          { arm: 'real', mitigation: 'none', shift: 0 },
          { arm: 'filler', mitigation: 'none', shift: positionDrift },
          { arm: 'real', mitigation: 'a-anchor', shift: anchorEffect },
          { arm: 'real', mitigation: 'placebo_iso_recipe', shift: 0 },
        ];
        for (const cell of cells) {
          for (let k = 0; k < design.probes; k++) {
            const latent = 1.5 + cell.shift + 0.6 * normal();
            const scores: Record<string, number> = {};
            judges.forEach((judge, j) => {
              scores[judge] = latent + 0.2 * j + 0.3 * normal();
            });
            observations.push({
              target,
              session,
              position: `P${p + 1}`,
              positionValue: 10 * (p + 1),
              arm: cell.arm,
              mitigation: cell.mitigation,
              distance: 'd0',
              surface: 'probe',
              item: `C0${k + 1}`,
              category: 'coding_self',
              paraphrase: 0,
              sample: 0,
              status: 'done',
              text: 'x',
              scores,
            });
          }
        }
      }
    }
  }
  return { observations, harnesses };
}

export interface ClaimCheck {
  /** Where in the JSON (a dotted path). */
  path: string;
  kind: 'claim' | 'interval-and-p';
  excludesZero: boolean;
  significant: boolean;
}

/**
 * Every claim of a report's JSON: objects with a `claim` (its interval against its p), and
 * every other object that prints an interval `ci` beside a p (except the TOST's, whose interval
 * answers a different question). Returns one check per claim.
 */
export function claimsOf(json: unknown, alpha = 0.05): ClaimCheck[] {
  const out: ClaimCheck[] = [];
  const pair = (x: unknown): x is [number, number] => Array.isArray(x) && x.length === 2 && typeof x[0] === 'number' && typeof x[1] === 'number';
  const visit = (node: unknown, path: string) => {
    if (Array.isArray(node)) {
      node.forEach((v, i) => {
        visit(v, `${path}[${i}]`);
      });
      return;
    }
    if (node === null || typeof node !== 'object') return;
    const o = node as Record<string, unknown>;
    if (o.claim && typeof o.claim === 'object') {
      const c = o.claim as { p: number; interval: [number, number]; alpha: number; significant: boolean };
      out.push({ path: `${path}.claim`, kind: 'claim', excludesZero: c.interval[0] > 0 || c.interval[1] < 0, significant: c.p < c.alpha });
      if (c.significant !== c.p < c.alpha)
        out.push({ path: `${path}.claim.significant`, kind: 'claim', excludesZero: !c.significant, significant: c.significant });
    }
    if (pair(o.ci) && typeof o.p === 'number' && !('margin' in o)) {
      out.push({ path, kind: 'interval-and-p', excludesZero: o.ci[0] > 0 || o.ci[1] < 0, significant: o.p < alpha });
    }
    for (const [k, v] of Object.entries(o)) if (k !== 'claim') visit(v, `${path}.${k}`);
  };
  visit(json, '$');
  return out;
}

/** One replicate through the report: its claims, and every way they could disagree. */
export function checkReplicate(seed: number, design: ClaimsDesign = CLAIMS_DESIGN) {
  const { observations, harnesses } = claimsObservations(seed, design);
  const report = analyzePersona(observations, { B: 2000, seed, primaryCategory: 'coding_self', harnesses });
  const json = JSON.parse(JSON.stringify(report)) as unknown;
  const checks = claimsOf(json);
  const disagreements = checks.filter((c) => c.excludesZero !== c.significant).map((c) => c.path);
  const holm = report.drift.filter((d) => !('error' in d.gap) && d.gap.claim.family > 1).length;
  const verdictMismatch = report.drift.filter((d) => {
    if ('error' in d.gap) return false;
    const c = d.gap.claim;
    return (d.verdict.kind === 'drift') !== c.significant || (d.verdict.fragile ?? false) !== c.fragile;
  }).length;
  const gate = personaGateChecks(report, { significantDrift: true, maxDrift: null }, 'run');
  const gateMismatch = report.drift.filter((d) => {
    if ('error' in d.gap) return false;
    const check = gate.find((g) => g.subject === `${d.target} (judge ${d.judge})` && g.name === 'significant-drift');
    return (check?.status === 'fail') !== (d.gap.claim.significant && d.gap.estimate > 0);
  }).length;
  // Claims whose test alone (its own interval) and Holm-adjusted claim decide differently.
  const holmChanged = [...report.drift.map((d) => d.gap), ...report.mitigations.flatMap((m) => [m.vsControl, m.vsPlacebo])].filter(
    (g) => g !== null && !('error' in g) && (g.ci[0] > 0 || g.ci[1] < 0) !== g.claim.significant,
  ).length;
  return { report, checks, disagreements, holm, verdictMismatch, gateMismatch, holmChanged };
}
