import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pValue } from '../../src/report/format.js';
import { renderReport } from '../../src/report/report.js';
import { openStore } from '../../src/store/run-store.js';
import { type BrowserSession, launchBrowser, screenshot, type WatchedPage } from './browser.js';
import { simPersonaRun } from './fixtures.js';

/** The HTML report in a real browser: it must open clean, draw every chart, and show the JSON export's numbers. */

interface GapJson {
  estimate: number;
  ci: [number, number];
  claim: { interval: [number, number]; p: number };
  real: { estimate: number };
  filler: { estimate: number };
}
interface ReportJson {
  runs: Array<{
    runId: string;
    accounting: { cells: number };
    persona: {
      drift: Array<{ target: string; judge: string; gap: GapJson; strongDrift: boolean }>;
      mitigations: Array<{ target: string; mitigation: string; distance: string; mean: number; n: number }>;
    };
  }>;
}

/** Cell texts of the first table after the heading with this id. */
function tableAfter(page: Page, headingId: string): Promise<string[][]> {
  return page.$eval(
    'body',
    (body, id) => {
      let el = body.querySelector(`#${id}`)?.nextElementSibling ?? null;
      while (el && el.tagName !== 'TABLE') el = el.nextElementSibling;
      if (!el) return [];
      return [...el.querySelectorAll('tbody tr')].map((r) => [...r.querySelectorAll('td')].map((td) => td.textContent ?? ''));
    },
    headingId,
  );
}

const sign2 = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));

async function openReport(browser: BrowserSession, db: string, name: string): Promise<{ watched: WatchedPage; url: string; json: ReportJson }> {
  const store = openStore(db, { readonly: true });
  const page = await renderReport(store, 'html');
  const json = JSON.parse(await renderReport(store, 'json')) as ReportJson;
  await store.close();
  const file = join(mkdtempSync(join(tmpdir(), 'echolens-report-html-')), `${name}.html`);
  writeFileSync(file, page);
  const url = pathToFileURL(file).href;
  const watched = await browser.open();
  await watched.page.goto(url, { waitUntil: 'load' });
  return { watched, url, json };
}

describe('HTML report in chromium', { timeout: 240_000 }, () => {
  let browser: BrowserSession;
  let dir: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    dir = mkdtempSync(join(tmpdir(), 'echolens-browser-report-'));
  }, 120_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('opens with no console error or failed request, every chart has drawn marks, and the numbers equal the JSON export', async () => {
    const db = join(dir, 'sim.db');
    await simPersonaRun(db);
    const { watched, url, json } = await openReport(browser, db, 'sim');
    const { page } = watched;
    await screenshot(page, 'report-sim');

    expect(watched.consoleErrors).toEqual([]);
    expect(watched.pageErrors).toEqual([]);
    expect(watched.failedRequests).toEqual([]);
    expect(watched.requests).toEqual([url]);
    expect(browser.external).toEqual([]);

    const charts = await page.$$eval('svg.marks', (svgs) =>
      svgs.map((svg) => {
        const marks = [...svg.querySelectorAll('g.role-mark > *')].filter((el) => {
          const box = el.getBoundingClientRect();
          return box.width + box.height > 0;
        });
        const outer = svg.getBoundingClientRect();
        return { marks: marks.length, width: outer.width, height: outer.height, title: svg.closest('figure')?.querySelector('figcaption')?.textContent ?? '' };
      }),
    );
    // Forest, trajectory, category, mitigation, stressor and fingerprint charts at least.
    expect(charts.length).toBeGreaterThanOrEqual(5);
    for (const chart of charts) {
      expect(chart.marks, `chart "${chart.title}" has no drawn marks`).toBeGreaterThan(0);
      expect(chart.width).toBeGreaterThan(100);
      expect(chart.height).toBeGreaterThan(40);
    }

    const run = json.runs[0]!;
    const cellsText = await page.locator('table.meta th:text-is("cells") + td').first().textContent();
    expect(cellsText?.startsWith(`${run.accounting.cells} (`)).toBe(true);

    // Forest table: the first table after the position-averaged heading.
    const driftRows = await tableAfter(page, 'persona-forest');
    expect(driftRows.length).toBe(run.persona.drift.length);
    for (const drift of run.persona.drift) {
      const row = driftRows.find((r) => r[0] === drift.target && r[1] === drift.judge);
      expect(row, `no table row for ${drift.target}`).toBeDefined();
      // Columns: target, judge, Δ [claim interval], real, filler, units, strong, p (Holm across targets), onset.
      const claim = drift.gap.claim;
      expect(row![2]!.startsWith(`${sign2(drift.gap.estimate)} [${sign2(claim.interval[0])}, ${sign2(claim.interval[1])}]`)).toBe(true);
      expect(row![3]).toBe(drift.gap.real.estimate.toFixed(3));
      expect(row![4]).toBe(drift.gap.filler.estimate.toFixed(3));
      expect(row![6]).toBe(drift.strongDrift ? 'yes' : 'no');
      expect(row![7]).toBe(pValue(claim.p));
    }
    // The planted effect is visible: simulated drift is strong and positive.
    expect(run.persona.drift[0]!.gap.estimate).toBeGreaterThan(0.5);

    const mitigationRows = await tableAfter(page, 'persona-mitigation');
    expect(mitigationRows.length).toBe(run.persona.mitigations.length);
    for (const m of run.persona.mitigations) {
      // Columns: target, judge, arm, prompt, distance, mean, n, …
      const row = mitigationRows.find((r) => r[0] === m.target && r[2] === m.mitigation && r[4] === m.distance);
      expect(row).toBeDefined();
      expect(row![5]).toBe(m.mean.toFixed(3));
      expect(row![6]).toBe(String(m.n));
    }
    await page.close();
  });

  it('renders a hostile target’s <script>, <img onerror> and javascript: answers as inert text', async () => {
    const db = join(dir, 'hostile.db');
    await simPersonaRun(db, ['sim:hostile', 'sim:persona']);
    const { watched, url } = await openReport(browser, db, 'hostile');
    const { page } = watched;
    // Give any injected handler a chance to fire.
    await page.waitForLoadState('networkidle');
    await screenshot(page, 'report-hostile');
    expect(watched.dialogs).toEqual([]);
    expect(watched.requests).toEqual([url]);
    expect(watched.pageErrors).toEqual([]);
    expect(browser.external).toEqual([]);
    const dom = await page.$eval('html', (root) => ({
      scripts: root.querySelectorAll('script').length,
      images: root.querySelectorAll('img').length,
      iframes: root.querySelectorAll('iframe').length,
      jsLinks: root.querySelectorAll('a[href^="javascript:" i]').length,
      handlers: [...root.querySelectorAll('*')].filter((el) => el.getAttributeNames().some((name: string) => name.startsWith('on'))).length,
      text: root.querySelector('body')?.textContent ?? '',
    }));
    expect(dom).toMatchObject({ scripts: 0, images: 0, iframes: 0, jsLinks: 0, handlers: 0 });
    expect(dom.text).toContain('<script>alert(1)</script>');
    expect(dom.text).toContain('<img src=x onerror=alert(2)>');
    await page.close();
  });
});
