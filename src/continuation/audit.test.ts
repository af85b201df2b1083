import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { findAudit } from '../experiment/registry.js';
import { analyzeAuditRun } from '../experiment/run-audit.js';
import { renderReport } from '../report/report.js';
import { auditSectionHtml } from '../report/document/render-html.js';
import { auditMarkdown } from '../report/document/render-markdown.js';
import { openStore } from '../store/run-store.js';
import { continuationConfigSchema } from './config.js';
import { runContinuation } from './run.js';
import { useTempDir } from '../sessions/testing/temp-dir.js';

registerBuiltinSimProfiles();
registerBuiltinAudits();

const tmp = useTempDir('echolens-continuation-audit-', 'test');

describe('the continuation audit on the shared protocol', () => {
  it('is registered; collect / analyze / every renderer work on a run; the shared report includes it', async () => {
    const audit = findAudit('continuation');
    expect(audit?.command).toBe('continuation');
    const db = join(tmp.path, 'run.db');
    const config = continuationConfigSchema.parse({
      session: join(packageRoot(), 'data', 'demo', 'claude-session.jsonl'),
      crossSession: join(packageRoot(), 'data', 'demo', 'codex-session.jsonl'),
      targets: ['sim:continuation-null'],
      cutpoints: { count: 10 },
    });
    const result = await runContinuation(config, db, { progress: false });
    const store = openStore(db, { readonly: true });
    try {
      const analyzed = await analyzeAuditRun(audit!, store, await store.requireRun(result.runId));
      expect(auditMarkdown(audit!, analyzed, 'Continuation')).toMatch(/^# Continuation\n/);
      const section = (await auditSectionHtml(audit!, analyzed)).toString();
      expect(section).toMatch(/Simulated targets/);
      expect(section).toMatch(/<svg/);
      const rows = audit!.render.csvRows(analyzed);
      // 6 contrasts × 3 strata × 2 analyses.
      expect(rows).toHaveLength(36);
      expect(audit!.render.viewerSummary(analyzed)[0]!.label).toMatch(/recent − cross/);
      const json = JSON.parse(await renderReport(store, 'json')) as { runs: Array<Record<string, unknown>> };
      const entry = json.runs.find((r) => (r.continuation as { runId?: string } | undefined)?.runId === result.runId);
      expect(entry).toBeDefined();
      // The first screen's numbers are the JSON report's primary contrast, formatted.
      type Est = { mean: number; ci: [number, number]; n: number };
      const jsonTarget = (
        entry!.continuation as { analysis: { targets: Array<{ target: string; contrasts: Array<{ primary: boolean; completeCase: Est; itt: Est }> }> } }
      ).analysis.targets[0]!;
      const primary = jsonTarget.contrasts.find((c) => c.primary)!;
      const s3 = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : x.toFixed(3));
      const [card] = audit!.render.document!(analyzed).verdicts;
      expect(card!.subject).toBe(jsonTarget.target);
      // The verdict reads ITT (the estimate the gate checks); the complete case follows it.
      expect(card!.numbers[0]!.value).toBe(`${s3(primary.itt.mean)} [${s3(primary.itt.ci[0])}, ${s3(primary.itt.ci[1])}]`);
      expect(card!.numbers[0]!.detail).toContain(`n ${primary.itt.n} cutpoints`);
      expect(card!.numbers[1]!.value).toBe(`${s3(primary.completeCase.mean)} [${s3(primary.completeCase.ci[0])}, ${s3(primary.completeCase.ci[1])}]`);
      const page = await renderReport(store, 'html');
      expect(page).toContain(`<span class="value">${card!.numbers[0]!.value}</span>`);
    } finally {
      await store.close();
    }
  });

  it('its dry run prints the cost estimate: naive, expected with caching and batch side by side', async () => {
    const audit = findAudit('continuation')!;
    const config = continuationConfigSchema.parse({
      session: join(packageRoot(), 'data', 'demo', 'claude-session.jsonl'),
      crossSession: join(packageRoot(), 'data', 'demo', 'codex-session.jsonl'),
      targets: ['anthropic:claude-sonnet-4-5'],
      cutpoints: { count: 4 },
    });
    const lines = audit.dryRun(config, await audit.prepare(config)).lines;
    expect(
      lines.some((line) =>
        /^cost side by side: naive \$\d+\.\d\d · expected with prompt caching \$\d+\.\d\d · with --batch \(batch × cache\) \$\d+\.\d\d/.test(line),
      ),
    ).toBe(true);
    expect(lines.at(-1)).toBe('nothing was called (--dry-run)');
  });

  it('calibrate reports the null false-positive rate and the planted power through the shared summaries', async () => {
    const calibration = await findAudit('continuation')!.calibrate!({ replicates: 40, seed: 3, B: 2000 });
    expect(calibration.tests.map((t) => t.test)).toEqual([
      'continuation-null/recent-cross/completeCase',
      'continuation-null/recent-cross/itt',
      'continuation/recent-cross/completeCase',
      'continuation/recent-cross/itt',
    ]);
    expect(calibration.tests.every((t) => t.replicates === 40)).toBe(true);
    // Every estimate now inverts its sign-flip test over 20,000 patterns (seconds on a shared machine).
  }, 120_000);
});
