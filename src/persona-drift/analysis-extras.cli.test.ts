import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { personaArgs } from '../cli/testing/persona-args.js';
import { runCliInProcess } from '../cli/testing/run-cli.js';
import { packageRoot } from '../core/version.js';
import type { PersonaReport } from './analysis.js';
import { personaExtrasSummary } from './extras-render.js';

/**
 * Issue 33 done-when, through the CLI in process: three simulated judges, one Claude Code and one
 * Codex session; the JSON report has `consensus[]` and `harness[]`, and Markdown shows them.
 */

const CLAUDE = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const CODEX = join(packageRoot(), 'data', 'demo', 'codex-session.jsonl');
const JUDGES = ['sim:judge', 'sim:judge-lenient', 'sim:judge-strict'];

describe('persona report: consensus and harness rows (SIMULATED models)', { timeout: 300_000 }, () => {
  it('three judges and a Claude Code plus a Codex session give consensus[] and harness[]', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-extras-'));
    const db = join(dir, 'persona.db');
    const run = await runCliInProcess(
      personaArgs({
        sessions: [CLAUDE, CODEX],
        targets: ['sim:persona'],
        judges: JUDGES,
        sets: ['positions=[{uniform: 3}]', 'samples=2', 'analysis.B=2000'],
        db,
      }),
    );
    expect(run.stderr).not.toMatch(/error/i);
    expect(run.code).toBe(0);
    const out = join(dir, 'report.json');
    const json = await runCliInProcess(['persona', 'report', db, '--format', 'json', '-o', out]);
    expect(json.code).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8')) as { persona?: PersonaReport } & PersonaReport;
    const persona = report.persona ?? report;
    expect(persona.consensus).toHaveLength(1);
    const consensus = persona.consensus[0]!;
    expect(consensus.judges).toEqual([...JUDGES].sort());
    expect(consensus.perJudge.map((j) => j.judge)).toEqual(consensus.judges);
    // The pooled estimate is the mean of the judges' estimates on the same units (balanced table).
    const meanOfJudges = consensus.perJudge.reduce((s, j) => s + j.estimate, 0) / consensus.perJudge.length;
    expect(consensus.estimate).toBeCloseTo(meanOfJudges, 12);
    expect(consensus.level).toBe('session');
    expect(consensus.units).toBe(2);
    // Two units: the test cannot reject, so the one interval (t ∪ 0) contains 0 beside p ≥ 0.05.
    expect(consensus.claim.p).toBe(consensus.p);
    expect(consensus.claim.significant).toBe(false);
    expect(consensus.claim.interval[0]).toBeLessThanOrEqual(0);
    expect(consensus.claim.interval[1]).toBeGreaterThanOrEqual(0);
    expect(consensus.ci[0]).toBeLessThanOrEqual(consensus.estimate + 1e-12);
    // sim:persona drifts on the real arm: every judge sees a positive gap.
    expect(consensus.signsAgree).toBe(true);
    expect(consensus.estimate).toBeGreaterThan(0);

    expect(persona.harness.length).toBe(3);
    for (const h of persona.harness) {
      expect(h.harnesses.map((l) => [l.harness, l.sessions.length])).toEqual([
        ['claude-code', 1],
        ['codex', 1],
      ]);
      expect(h.underpowered).toBe(true);
      expect(h.reason).toMatch(/1 Claude Code and 1 Codex session/);
      expect(h.difference.p).toBeNull();
      expect(h.difference.estimate).toBeCloseTo(h.harnesses[0]!.estimate - h.harnesses[1]!.estimate, 12);
    }
    expect(persona.onset.length).toBe(3);
    for (const o of persona.onset) {
      expect(o.rule).toMatch(/survives Holm/);
      if (o.onset === null) expect(o.reason).toEqual(expect.any(String));
    }

    const md = await runCliInProcess(['persona', 'report', db]);
    expect(md.code).toBe(0);
    expect(md.stdout).toContain('## Pooled multi-judge consensus');
    expect(md.stdout).toContain('## Claude Code versus Codex sessions');
    expect(md.stdout).toContain('## Onset');
    const summary = personaExtrasSummary(persona);
    expect(summary.map((l) => l.label)).toContain('pooled consensus Δ · sim:persona · 3 judges');
    expect(summary.filter((l) => l.value.endsWith('· underpowered'))).toHaveLength(3);
    expect(md.stdout).toContain('underpowered: 1 Claude Code and 1 Codex session(s)');
    const html = await runCliInProcess(['report', db, '--format', 'html', '-o', join(dir, 'report.html')]);
    expect(html.code).toBe(0);
    const page = readFileSync(join(dir, 'report.html'), 'utf8');
    expect(page).toContain('id="persona-consensus"');
    expect(page).toContain('id="persona-harness"');
    // Two sessions cannot make the headline significant, so the at-a-glance onset says why there is none.
    expect(page).toContain('the headline drift is not significant (underpowered for this design)');
  });
});
