import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../src/cli/testing/run-cli.js';
import { createAdapter } from '../../src/models/create-adapter.js';
import { type FakeRequest, type FakeServer, startFakeOpenAI } from '../../src/models/testing/index.js';
import { renderHtmlReport, collectReports } from '../../src/report/report.js';
import { startViewer } from '../../src/report/viewer/server.js';
import { openStore } from '../../src/store/run-store.js';
import { type BrowserSession, launchBrowser, screenshot } from './browser.js';
import { DEMO_SESSION, registerTestSims } from './fixtures.js';

/**
 * The viewer's trend page of a design measured three times against a local OpenAI-compatible
 * server: the third measurement's provider reports another model version — a string with markup,
 * which must show as text — and its answers take a human register in the real session's context.
 */

const HOSTILE_MODEL = '<img src=x onerror=alert(9)>m-2026';
const before = () => ({ text: "As an AI assistant, I don't have personal tastes.", model: 'm-2025-01', systemFingerprint: 'fp_old' });
const after = (request: FakeRequest) => ({
  text: JSON.stringify(request.body?.messages ?? []).includes('tally')
    ? 'I love long walks and my favourite food is ramen.'
    : "As an AI assistant, I don't have personal tastes.",
  model: HOSTILE_MODEL,
});

describe('trend page in chromium', { timeout: 300_000 }, () => {
  let browser: BrowserSession;
  let server: FakeServer;
  let dir: string;
  let db: string;

  beforeAll(async () => {
    registerTestSims();
    browser = await launchBrowser();
    dir = mkdtempSync(join(tmpdir(), 'echolens-browser-trend-'));
    db = join(dir, 'runs.db');
    server = await startFakeOpenAI({ respond: before });
    const args = [
      'persona',
      'run',
      '--session',
      DEMO_SESSION,
      '--target',
      `openai-compatible:m@${server.baseURL}`,
      '--judge',
      'sim:judge',
      '--set',
      'positions=[{uniform: 6}]',
      '--db',
      db,
    ];
    for (const [extra, respond] of [
      [['--tag', 'first'], before],
      [['--fresh'], before],
      [['--fresh', '--tag', 'after-update'], after],
    ] as const) {
      server.setRespond(respond);
      const run = await runCliInProcess([...args, ...extra]);
      expect(run.code, run.stderr).toBe(0);
    }
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    server?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  it('charts each measurement with its interval, marks the model change, escapes the reported model id, and the latest report links it', async () => {
    const viewer = await startViewer({
      stores: [{ file: db, store: openStore(db, { readonly: true }) }],
      sessions: [],
      target: createAdapter('sim:persona'),
      judge: createAdapter('sim:judge'),
      port: 0,
    });
    const watched = await browser.open();
    const { page } = watched;
    try {
      await page.goto(viewer.url);
      const link = page.locator('a.trend-link');
      await expect(link.count()).resolves.toBe(1);
      await Promise.all([page.waitForURL(/\/trend\?/u), link.click()]);
      await expect(page.locator('svg g.measurement').count()).resolves.toBe(3);
      await expect(page.locator('svg g.model-change').count()).resolves.toBe(1);
      await expect(page.locator('tr.model-changed').count()).resolves.toBe(1);
      // The provider-reported id is text, not markup.
      await expect(page.locator('section.trend table').textContent()).resolves.toContain(HOSTILE_MODEL);
      await expect(page.locator('section.trend img').count()).resolves.toBe(0);
      const tags = await page.locator('section.trend td:nth-child(3)').allTextContents();
      expect(tags).toEqual(['first', '', 'after-update']);
      // The third point sits above the first two: the drift gap grew.
      const ys = await page.locator('svg g.measurement circle').evaluateAll((nodes) => nodes.map((n) => Number(n.getAttribute('cy'))));
      expect(ys[2]).toBeLessThan(Math.min(ys[0] as number, ys[1] as number));
      // Each run page of the design links the trend too.
      await Promise.all([page.waitForURL(/\/run\?/u), page.locator('section.trend table a').first().click()]);
      await expect(page.locator('#trend-link').textContent()).resolves.toBe('over time (3 measurements)');
      await Promise.all([page.waitForURL(/\/trend\?/u), page.locator('#trend-link').click()]);
      const file = await screenshot(page, 'viewer-trend');
      expect(file).toMatch(/viewer-trend\.png$/u);
      expect(watched.dialogs).toEqual([]);
      expect(watched.pageErrors).toEqual([]);
      expect(watched.consoleErrors).toEqual([]);
      expect(browser.external).toEqual([]);
    } finally {
      await page.close();
      await viewer.close();
    }
    // The HTML report of the latest measurement links the trend and carries it; an earlier one does not.
    const store = openStore(db, { readonly: true });
    try {
      const runs = (await store.listRuns()).sort((a, b) => a.startedAt.localeCompare(b.startedAt));
      const latest = await renderHtmlReport(store, await collectReports(store, [runs[2]?.id as string]));
      expect(latest).toMatch(/href="#trend-persona-[0-9a-f]{12}"/u);
      expect(latest).toContain('class="trend"');
      expect(latest).not.toContain('<img src=x');
      const earlier = await renderHtmlReport(store, await collectReports(store, [runs[0]?.id as string]));
      expect(earlier).not.toContain('class="trend"');
    } finally {
      await store.close();
    }
  });
});
