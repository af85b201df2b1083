import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../../src/builtin-sims.js';
import { runDemo } from '../../src/demo/demo.js';
import { createAdapter } from '../../src/models/create-adapter.js';
import { pValue } from '../../src/report/format.js';
import { renderReport } from '../../src/report/report.js';
import { startViewer, type ViewerServer } from '../../src/report/viewer/server.js';
import { openStore } from '../../src/store/run-store.js';
import { type BrowserSession, launchBrowser, screenshot, type WatchedPage } from './browser.js';

/**
 * The viewer on the demo store (persona, memory and continuation runs) in chromium: each audit's
 * run page has its headline and charts with marks, its numbers are the JSON report's, filters
 * narrow the list with counts that agree, and a cell page steps to the next cell and to its
 * paired cell. Every page is captured at 1400 and 800 px (test-artifacts/viewer-after-*).
 */

interface JsonReport {
  runs: Array<{
    runId: string;
    experiment: string;
    persona?: { drift: Array<{ gap: { estimate: number; ci: [number, number]; claim: { family: number; interval: [number, number]; p: number } } }> };
    memory?: { targets: Array<{ metrics: { dtw: { tiers: Array<{ tier: string; elevation: { estimate: number; ci: [number, number] } }> } } }> };
    continuation?: { analysis: { targets: Array<{ contrasts: Array<{ primary: boolean; completeCase: { mean: number; n: number } }> }> } };
  }>;
}

const WIDTHS = [1400, 800] as const;
const sign = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(0)}%`;

async function shots(page: Page, name: string): Promise<void> {
  for (const width of WIDTHS) {
    await page.setViewportSize({ width, height: 900 });
    await screenshot(page, `viewer-after-${name}-${width}`);
    // The first screen as a reader sees it (long cell lists make the full page very tall).
    await screenshot(page, `viewer-after-${name}-${width}-top`, false);
  }
  await page.setViewportSize({ width: 1400, height: 900 });
}

const matchCount = async (page: Page) => {
  const text = (await page.locator('#match-count').textContent()) ?? '';
  const m = /^(\d+) of (\d+) model answers match\.$/u.exec(text.trim());
  if (!m) throw new Error(`match count: ${text}`);
  return { matched: Number(m[1]), answers: Number(m[2]) };
};

describe('viewer on the demo store: every audit in chromium', { timeout: 600_000 }, () => {
  let browser: BrowserSession;
  let viewer: ViewerServer;
  let db: string;
  let report: JsonReport;
  let watched: WatchedPage;

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    const demo = await runDemo({ outDir: mkdtempSync(join(tmpdir(), 'echolens-viewer-audits-')), fresh: true });
    db = demo.db;
    const store = openStore(db, { readonly: true });
    report = JSON.parse(await renderReport(store, 'json')) as JsonReport;
    await store.close();
    viewer = await startViewer({
      stores: [{ file: db, store: openStore(db, { readonly: true }) }],
      sessions: [],
      target: createAdapter('sim:persona'),
      judge: createAdapter('sim:judge'),
      port: 0,
    });
    browser = await launchBrowser();
    watched = await browser.open();
  }, 600_000);
  afterAll(async () => {
    await watched?.page.close();
    await browser?.close();
    await viewer?.close();
  });

  const runOf = (experiment: string) => report.runs.find((r) => r.experiment === experiment)!;

  it('lists the three runs by their config names', async () => {
    const { page } = watched;
    await page.goto(viewer.url);
    const names = await page.locator('a.run-link').allTextContents();
    expect(names.sort()).toEqual(['echolens-demo-continuation', 'echolens-demo-memory', 'echolens-demo-persona']);
    await shots(page, 'runs');
  });

  for (const experiment of ['persona', 'memory', 'continuation'] as const) {
    it(`${experiment}: headline equal to the JSON report, charts with marks, filters with counts that agree, cell navigation and pair`, async () => {
      const { page } = watched;
      const run = runOf(experiment);
      await page.goto(viewer.url);
      await Promise.all([page.waitForURL(/\/run\?/u), page.locator('a.run-link', { hasText: `echolens-demo-${experiment}` }).click()]);

      // Headline and charts.
      await expect(page.locator('#headline').isVisible()).resolves.toBe(true);
      const headline = await page.locator('#headline .headline-value').allTextContents();
      if (experiment === 'persona') {
        // The claim: its interval and the p that decides it (one target, so a plain 95% interval).
        const gap = run.persona!.drift[0]!.gap;
        expect(gap.claim.family).toBe(1);
        expect(headline[0]!.split(' · ')[0]).toBe(
          `${sign(gap.estimate)} [${sign(gap.claim.interval[0])}, ${sign(gap.claim.interval[1])}], p ${pValue(gap.claim.p)}`,
        );
      } else if (experiment === 'memory') {
        const tiers = run.memory!.targets[0]!.metrics.dtw.tiers;
        for (const t of tiers) expect(headline).toContain(`${pct(t.elevation.estimate)} [${pct(t.elevation.ci[0])}, ${pct(t.elevation.ci[1])}]`);
      } else {
        const primary = run.continuation!.analysis.targets[0]!.contrasts.find((c) => c.primary)!;
        expect(headline[0]).toMatch(
          new RegExp(
            `^complete case ${primary.completeCase.mean >= 0 ? '\\+' : '-'}${Math.abs(primary.completeCase.mean).toFixed(3)} .*\\(n ${primary.completeCase.n}\\)`,
            'u',
          ),
        );
      }
      const charts = await page.locator('#charts figure svg').count();
      expect(charts).toBeGreaterThanOrEqual(1);
      const marks = await page.locator('#charts figure svg').first().locator('path, rect, circle, line').count();
      expect(marks).toBeGreaterThan(3);
      await expect(page.locator('#report-link').getAttribute('href')).resolves.toBe(`/runs/${run.runId}/report?s=0`);
      await shots(page, `run-${experiment}`);

      // Filters narrow the list; the count agrees with the rows shown and with the header.
      const all = await matchCount(page);
      const runCounts = (await page.locator('#run-counts').textContent()) ?? '';
      expect(runCounts.replace(/,/gu, '')).toContain(`${all.answers} model answers`);
      const factor = experiment === 'persona' ? ['arm', 'filler'] : experiment === 'memory' ? ['condition', 'age'] : ['arm', 'recent'];
      await Promise.all([page.waitForURL(new RegExp(`${factor[0]}=${factor[1]}`, 'u')), page.selectOption(`select[name="${factor[0]}"]`, factor[1]!)]);
      const narrowed = await matchCount(page);
      expect(narrowed.answers).toBe(all.answers);
      expect(narrowed.matched).toBeGreaterThan(0);
      expect(narrowed.matched).toBeLessThan(all.matched);
      const rows = await page.locator('a.cell-link').count();
      expect(rows).toBe(Math.min(100, narrowed.matched));
      const api = (await (await page.request.get(`${viewer.url}api/cells?s=0&r=${run.runId}&${factor[0]}=${factor[1]}`)).json()) as { matched: number };
      expect(api.matched).toBe(narrowed.matched);
      await shots(page, `run-${experiment}-filtered`);

      // A cell: next within the filter, and its paired cell.
      await Promise.all([page.waitForURL(/\/cell\?/u), page.locator('a.cell-link').first().click()]);
      await expect(page.locator('#cell-position').textContent()).resolves.toBe(`1 of ${narrowed.matched}`);
      await shots(page, `cell-${experiment}`);
      await Promise.all([page.waitForURL(/\/cell\?/u), page.click('#next-cell')]);
      await expect(page.locator('#cell-position').textContent()).resolves.toBe(`2 of ${narrowed.matched}`);
      await expect(page.locator('#prev-cell').count()).resolves.toBe(1);
      if (experiment === 'memory') {
        // A perturbed answer is shown beside the no-memory reference to the same question.
        await expect(page.locator('#pair').textContent()).resolves.toContain('no_perturbation');
      }
      const pairText = await page.locator('#pair .pair-response').textContent();
      expect(pairText).toMatch(/\S/u);
      await Promise.all([page.waitForURL(/\/cell\?/u), page.click('#pair-link')]);
      await expect(page.locator('pre.response').textContent()).resolves.toBe(pairText);
      await shots(page, `cell-${experiment}-pair`);

      // The full report, served by the viewer.
      await page.goto(`${viewer.url}runs/${run.runId}/report?s=0`);
      await expect(page.locator('svg').count()).resolves.toBeGreaterThan(0);
      await shots(page, `report-${experiment}`);
      await page.goto(`${viewer.url}analysis?s=0&r=${run.runId}`);
      await shots(page, `analysis-${experiment}`);
    });
  }

  it('compares two runs of one audit with B − A intervals and refuses two audits', async () => {
    const { page } = watched;
    const persona = runOf('persona').runId;
    await page.goto(`${viewer.url}compare?a=0:${persona}&b=0:${persona}`);
    await expect(page.locator('span.difference').first().textContent()).resolves.toBe('+0.00 [+0.00, +0.00]');
    await shots(page, 'compare');
    const response = await page.goto(`${viewer.url}compare?a=0:${persona}&b=0:${runOf('memory').runId}`);
    expect(response?.status()).toBe(400);
    await expect(page.locator('p.error').textContent()).resolves.toMatch(/compare only runs of the same audit/u);
    await shots(page, 'compare-refused');
    expect(watched.pageErrors).toEqual([]);
    expect(watched.consoleErrors.filter((e) => !/400/u.test(e))).toEqual([]);
    expect(browser.external).toEqual([]);
  });
});
