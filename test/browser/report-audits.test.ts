import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runDemo } from '../../src/demo/demo.js';
import { renderReport } from '../../src/report/report.js';
import { openStore } from '../../src/store/run-store.js';
import { type BrowserSession, launchBrowser, screenshot } from './browser.js';
import { registerTestSims } from './fixtures.js';

/**
 * The HTML report of the demo's persona, memory and continuation runs (simulated models) in
 * chromium at 1400 and 800 px: the verdicts and key numbers on the first screen equal the JSON
 * report's, every chart draws marks with hover titles and uses the column's width, and nothing
 * overflows sideways on the narrow screen. Screenshots go to test-artifacts/.
 */

const WIDTHS = [1400, 800] as const;
const VIEWPORT_HEIGHT = 900;

const sign2 = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
const sign3 = (x: number) => (x >= 0 ? `+${x.toFixed(3)}` : x.toFixed(3));
const pct = (x: number) => `${x >= 0 ? '+' : ''}${(100 * x).toFixed(1)}%`;
const pv = (p: number) => (p < 0.001 ? '<0.001' : p.toFixed(3));

interface Interval {
  estimate: number;
  ci: [number, number];
  p: number;
}
interface RunJson {
  runId: string;
  experiment: string;
  simulated: boolean;
  persona?: { drift: Array<{ target: string; judge: string; gap: Interval; verdict: { kind: string } }> };
  memory?: {
    targets: Array<{
      target: string;
      validity: { overall: string };
      metrics: {
        dtw: {
          tiers: Array<{ tier: string; elevation: Interval | { error: string } }>;
          dRel: Array<{ condition: string; result: { significant: boolean } | { error: string } }>;
        };
      };
    }>;
  };
  continuation?: {
    analysis: {
      targets: Array<{
        target: string;
        contrasts: Array<{
          primary: boolean;
          completeCase: { mean: number; ci: [number, number]; n: number };
          itt: { mean: number; ci: [number, number]; n: number };
        }>;
      }>;
    };
  };
}

interface Card {
  run: string;
  audit: string;
  target: string;
  verdict: string;
  verdictTop: number;
  numbers: Record<string, string>;
}

async function cards(page: Page): Promise<Card[]> {
  return page.$$eval('.glance .card', (els) =>
    els.map((el) => {
      const numbers: Record<string, string> = {};
      for (const dd of el.querySelectorAll('dd')) numbers[dd.getAttribute('data-label') ?? ''] = dd.querySelector('.value')?.textContent ?? '';
      const verdict = el.querySelector('.verdict');
      return {
        run: el.getAttribute('data-run') ?? '',
        audit: el.getAttribute('data-audit') ?? '',
        target: el.querySelector('.target')?.textContent ?? '',
        verdict: verdict?.textContent ?? '',
        verdictTop: verdict?.getBoundingClientRect().top ?? Number.POSITIVE_INFINITY,
        numbers,
      };
    }),
  );
}

/** Every number of every first-screen card, checked against the JSON report's analysis objects. */
function expectCardsEqualJson(found: Card[], runs: RunJson[]): void {
  for (const run of runs) {
    const mine = found.filter((c) => c.run === run.runId);
    if (run.persona) {
      expect(mine.length).toBe(run.persona.drift.length);
      for (const d of run.persona.drift) {
        const card = mine.find((c) => c.target.startsWith(`${d.target} · judged by ${d.judge}`));
        expect(card, `card of ${d.target}`).toBeDefined();
        expect(card!.verdict).toBe(d.verdict.kind);
        expect(card!.numbers['drift gap Δ [95% CI]']).toBe(`${sign2(d.gap.estimate)} [${sign2(d.gap.ci[0])}, ${sign2(d.gap.ci[1])}]`);
      }
    }
    if (run.memory) {
      expect(mine.length).toBe(run.memory.targets.length);
      for (const t of run.memory.targets) {
        const card = mine.find((c) => c.target.startsWith(t.target));
        expect(card, `card of ${t.target}`).toBeDefined();
        expect(card!.numbers['instrument validity']).toBe(t.validity.overall);
        const names: Record<string, string> = { noise: 'pragmatic noise', persona: 'persona cues', life_event: 'life events' };
        for (const tier of t.metrics.dtw.tiers) {
          const e = tier.elevation;
          const text = 'error' in e ? `n/a (${e.error})` : `${pct(e.estimate)} [${pct(e.ci[0])}, ${pct(e.ci[1])}], p ${pv(e.p)}`;
          expect(card!.numbers[`DTW elevation · ${names[tier.tier]}`]).toBe(text);
        }
        const significant = t.metrics.dtw.dRel.filter((d) => !('error' in d.result) && d.result.significant).map((d) => d.condition);
        expect(card!.numbers['significant categories (DTW d_rel, BH)']).toBe(significant.length > 0 ? significant.join(', ') : 'none');
      }
    }
    if (run.continuation) {
      const targets = run.continuation.analysis.targets;
      expect(mine.length).toBe(targets.length);
      for (const t of targets) {
        const primary = t.contrasts.find((c) => c.primary)!;
        const card = mine.find((c) => c.target.startsWith(t.target));
        expect(card, `card of ${t.target}`).toBeDefined();
        const cc = primary.completeCase;
        expect(card!.numbers['recent − cross fidelity, complete case [95% CI]']).toBe(`${sign3(cc.mean)} [${sign3(cc.ci[0])}, ${sign3(cc.ci[1])}]`);
        const itt = primary.itt;
        expect(card!.numbers['recent − cross fidelity, ITT [95% CI]']).toBe(`${sign3(itt.mean)} [${sign3(itt.ci[0])}, ${sign3(itt.ci[1])}]`);
      }
    }
  }
}

async function chartFacts(page: Page) {
  return page.$$eval('figure.chart svg.marks', (svgs) =>
    svgs.map((svg) => {
      const drawn = [...svg.querySelectorAll('g.role-mark > *')].filter((el) => {
        const box = el.getBoundingClientRect();
        return box.width + box.height > 0;
      });
      const figure = svg.closest('figure')!;
      const ticks = [...svg.querySelectorAll('g.role-axis-label text')].map((t) => t.textContent ?? '');
      return {
        caption: figure.querySelector('figcaption')?.textContent ?? '',
        marks: drawn.length,
        titles: svg.querySelectorAll('g.role-mark title').length,
        width: svg.getBoundingClientRect().width,
        column: figure.getBoundingClientRect().width,
        ticks,
      };
    }),
  );
}

describe('HTML report of every audit in chromium', { timeout: 420_000 }, () => {
  let browser: BrowserSession;
  let dir: string;
  const pages: Array<{ name: string; file: string; runs: RunJson[] }> = [];

  beforeAll(async () => {
    registerTestSims();
    dir = mkdtempSync(join(tmpdir(), 'echolens-browser-audits-'));
    const demo = await runDemo({ outDir: dir, fresh: true });
    const store = openStore(demo.db, { readonly: true });
    try {
      const all = JSON.parse(await renderReport(store, 'json')) as { runs: RunJson[] };
      pages.push({ name: 'report-demo', file: demo.reportPath, runs: all.runs });
      for (const run of all.runs) {
        const file = join(dir, `${run.experiment}.html`);
        writeFileSync(file, await renderReport(store, 'html', { runIds: [run.runId] }));
        pages.push({ name: `report-${run.experiment}`, file, runs: [run] });
      }
    } finally {
      await store.close();
    }
    browser = await launchBrowser();
  }, 300_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('covers a persona, a memory and a continuation run, all simulated', () => {
    expect(pages.map((p) => p.name).sort()).toEqual(['report-continuation', 'report-demo', 'report-memory', 'report-persona']);
    expect(pages[0]!.runs.every((r) => r.simulated)).toBe(true);
  });

  for (const width of WIDTHS) {
    it(`at ${width} px: verdicts on the first screen equal the JSON, charts draw titled marks at the column's width, no sideways overflow`, async () => {
      for (const p of pages) {
        const watched = await browser.open();
        const { page } = watched;
        await page.setViewportSize({ width, height: VIEWPORT_HEIGHT });
        await page.goto(pathToFileURL(p.file).href, { waitUntil: 'load' });
        await screenshot(page, `${p.name}-${width}`);
        await screenshot(page, `${p.name}-${width}-first-screen`, false);
        expect(watched.consoleErrors).toEqual([]);
        expect(watched.pageErrors).toEqual([]);
        expect(browser.external).toEqual([]);

        // The simulated flag is in the first screen, above everything else.
        const banner = await page.locator('header.top .banner').boundingBox();
        expect(banner, `${p.name}: simulated banner in the header`).not.toBeNull();
        expect(banner!.y).toBeLessThan(VIEWPORT_HEIGHT / 2);

        const found = await cards(page);
        expect(found.length).toBeGreaterThanOrEqual(p.runs.length);
        // The first verdict always, and at the wide width every verdict, is in the first viewport.
        expect(found[0]!.verdictTop, `${p.name}: first verdict in view`).toBeLessThan(VIEWPORT_HEIGHT);
        if (width === 1400) for (const c of found) expect(c.verdictTop, `${p.name}: ${c.target} verdict in view`).toBeLessThan(VIEWPORT_HEIGHT);
        expectCardsEqualJson(found, p.runs);

        const charts = await chartFacts(page);
        expect(charts.length).toBeGreaterThan(0);
        for (const chart of charts) {
          expect(chart.marks, `${p.name}: "${chart.caption}" has drawn marks`).toBeGreaterThan(0);
          expect(chart.titles, `${p.name}: "${chart.caption}" has hover titles`).toBeGreaterThan(0);
          expect(chart.width, `${p.name}: "${chart.caption}" fills its column`).toBeGreaterThanOrEqual(Math.min(1000, chart.column) - 2);
          for (const tick of chart.ticks) expect(tick, `${p.name}: tick label of "${chart.caption}"`).not.toMatch(/\d\.\d{5,}/u);
        }

        const layout = await page.$eval('html', (root) => ({ scroll: root.scrollWidth, client: root.clientWidth, height: root.scrollHeight }));
        expect(layout.scroll, `${p.name} at ${width}px overflows sideways`).toBeLessThanOrEqual(layout.client);
        // Metadata sits at the end, as a table, with no raw JSON arrays or objects.
        const meta = await page.$$eval('table.meta td', (tds) => tds.map((td) => td.textContent ?? ''));
        expect(meta.length).toBeGreaterThan(0);
        for (const value of meta) expect(value).not.toMatch(/^[[{]"/u);
        // Document order: the first screen, then the charts, then the metadata.
        const order = await page.$eval('body', (body) => [...body.querySelectorAll('#at-a-glance, figure.chart, #metadata')].map((el) => el.id || 'chart'));
        expect(order[0]).toBe('at-a-glance');
        expect(order.at(-1)).toBe('metadata');
        expect(order).toContain('chart');
        if (width === 800 && p.name === 'report-demo') {
          // Print layout: no navigation, tables unclipped, charts within the page, run sections on new pages.
          await page.emulateMedia({ media: 'print' });
          const print = await page.$eval('body', (body) => ({
            nav: body.querySelector('nav.toc')?.getBoundingClientRect().height ?? -1,
            tables: [...body.querySelectorAll('main table')].map((t) => t.ownerDocument.defaultView!.getComputedStyle(t).display),
            breaks: [...body.querySelectorAll('section.run + section.run > h2')].map((h) => h.ownerDocument.defaultView!.getComputedStyle(h).breakBefore),
            wide: [...body.querySelectorAll('main *')]
              .filter((el) => el.getBoundingClientRect().right > body.clientWidth + 1)
              .map((el) => `${el.tagName}.${el.className}`)
              .slice(0, 5),
            overflow: body.scrollWidth - body.clientWidth,
          }));
          expect(print.nav).toBe(0);
          expect(new Set(print.tables)).toEqual(new Set(['table']));
          expect(print.breaks.length).toBe(p.runs.length - 1);
          for (const b of print.breaks) expect(b).toBe('page');
          expect(print.overflow, `wider than the page: ${print.wide.join(', ')}`).toBeLessThanOrEqual(0);
          const pdf = await page.pdf({ width: '210mm', height: '297mm' });
          expect(pdf.length).toBeGreaterThan(10_000);
          await page.emulateMedia({ media: 'screen' });
        }
        console.log(`${p.name} @${width}px: page height ${layout.height} px, ${charts.length} charts`);
        await page.close();
      }
    });
  }
});
