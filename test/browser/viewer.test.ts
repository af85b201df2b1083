import { mkdtempSync } from 'node:fs';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createAdapter } from '../../src/models/create-adapter.js';
import { type FakeServer, startFakeOpenAI } from '../../src/models/testing/index.js';
import type { ChatMessage } from '../../src/models/types.js';
import type { GapEstimate } from '../../src/persona-drift/analysis.js';
import { personaReport } from '../../src/persona-drift/run.js';
import { createPersonaSimProfile } from '../../src/persona-drift/sim.js';
import { startViewer, type ViewerServer } from '../../src/report/viewer/server.js';
import { readSession } from '../../src/sessions/read.js';
import type { Session } from '../../src/sessions/types.js';
import { pValue } from '../../src/report/format.js';
import { openStore } from '../../src/store/run-store.js';
import { type BrowserSession, launchBrowser, screenshot, type WatchedPage } from './browser.js';
import { DEMO_SESSION, HOSTILE_TEXT, registerTestSims, simPersonaRun } from './fixtures.js';

/** The local viewer in chromium: browsing, filtering, a cell, the live probe over SSE, inert hostile output, refusals. */

type LogEntry = { method: string; path: string; status: number; reason?: string };

async function viewerOn(dbs: string[], sessions: Session[], target: string, judge: string, log: LogEntry[] = []): Promise<ViewerServer> {
  return startViewer({
    stores: dbs.map((file) => ({ file, store: openStore(file, { readonly: true }) })),
    sessions,
    target: createAdapter(target),
    judge: createAdapter(judge),
    port: 0,
    onRequest: (entry) => log.push(entry),
  });
}

function pathsOf(watched: WatchedPage, origin: string): string[] {
  return watched.requests.map((url) => (url.startsWith(origin) ? new URL(url).pathname : `EXTERNAL ${url}`));
}

describe('viewer in chromium', { timeout: 300_000 }, () => {
  let browser: BrowserSession;
  let dir: string;
  let db: string;
  let runId: string;
  let session: Session;

  beforeAll(async () => {
    browser = await launchBrowser();
    registerTestSims();
    dir = mkdtempSync(join(tmpdir(), 'echolens-browser-viewer-'));
    db = join(dir, 'sim.db');
    runId = await simPersonaRun(db);
    session = await readSession(DEMO_SESSION);
  }, 180_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('lists a run, filters its cells by arm and score, and opens a cell with its context, response and judge reasoning', async () => {
    const viewer = await viewerOn([db], [session], 'sim:persona', 'sim:judge');
    const watched = await browser.open();
    const { page } = watched;
    try {
      await page.goto(viewer.url);
      await screenshot(page, 'viewer-runs');
      // Runs are listed by name, with the id beside it.
      const link = page.locator('tr', { hasText: runId }).locator('a.run-link');
      await expect(link.count()).resolves.toBe(1);
      await Promise.all([page.waitForURL(/\/run\?/u), link.click()]);
      const all = await page.locator('#match-count').textContent();
      expect(all).toMatch(/^(\d+) of \1 model answers match\.$/u);

      // Changing a select submits the filter form (client script).
      await Promise.all([page.waitForURL(/arm=filler/u), page.selectOption('select[name="arm"]', 'filler')]);
      const armColumn = await columnTexts(page, 'arm');
      expect(armColumn.length).toBeGreaterThan(0);
      expect(new Set(armColumn)).toEqual(new Set(['filler']));

      await Promise.all([page.waitForURL(/arm=real/u), page.selectOption('select[name="arm"]', 'real')]);
      await page.fill('input[name="max"]', '1');
      await Promise.all([page.waitForURL(/max=1/u), page.click('#filters button[type="submit"]')]);
      const scores = (await columnTexts(page, 'score')).map(Number);
      const arms = await columnTexts(page, 'arm');
      expect(scores.length).toBeGreaterThan(0);
      expect(scores.every((s) => s <= 1)).toBe(true);
      expect(new Set(arms)).toEqual(new Set(['real']));
      const matched = Number((await page.locator('#match-count').textContent())?.split(' ')[0]);
      expect(matched).toBe(scores.length);
      await screenshot(page, 'viewer-run-filtered', false);

      await Promise.all([page.waitForURL(/\/cell\?/u), page.locator('a.cell-link').first().click()]);
      await expect(page.locator('pre.response').textContent()).resolves.toMatch(/\S/u);
      await expect(page.locator('.judge-reason').first().textContent()).resolves.toMatch(/\S/u);
      const messages = await page.locator('.msg').count();
      expect(messages).toBeGreaterThanOrEqual(3);
      await expect(page.locator('.msg.role-system pre').first().textContent()).resolves.toContain('AI assistant');
      await screenshot(page, 'viewer-cell');

      expect(watched.consoleErrors).toEqual([]);
      expect(watched.pageErrors).toEqual([]);
      expect(watched.failedRequests).toEqual([]);
      expect(browser.external).toEqual([]);
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  describe('live probe against a local fake OpenAI server (SSE)', () => {
    let fake: FakeServer;
    beforeAll(async () => {
      const persona = createPersonaSimProfile({ name: 'fake-wire-persona', drift: 1, baselineDrift: 0 });
      const judge = createAdapter('sim:judge');
      fake = await startFakeOpenAI({
        respond: async (request) => {
          const messages = (request.body?.messages ?? []) as ChatMessage[];
          if (String(messages[0]?.content ?? '').startsWith('You are the echolens assistant-register judge')) {
            return { text: (await judge.generate({ model: 'sim:judge', messages, params: {}, sample: 0 })).text };
          }
          return { text: persona.answer({ model: 'wire', messages, params: {}, sample: 0 }, 7).text, chunkSize: 6 };
        },
      });
    });
    afterAll(async () => fake?.close());

    it('streams the real, filler and anchor arms side by side and shows a judge score for each', async () => {
      const viewer = await viewerOn([db], [session], `openai-compatible:fake-target@${fake.baseURL}`, `openai-compatible:fake-judge@${fake.baseURL}`);
      const watched = await browser.open();
      const { page } = watched;
      try {
        await page.goto(`${viewer.url}probe`);
        await expect(page.locator('#sim-banner').count()).resolves.toBe(0);
        const preset = await page.locator('#preset option').nth(1).getAttribute('value');
        await page.selectOption('#preset', { index: 1 });
        await expect(page.inputValue('#probe')).resolves.toBe(preset);
        await page.selectOption('#position', '0:5');
        await page.check('#anchor');
        await page.click('#run');
        await page.waitForSelector('#probe-form[data-state="done"]', { timeout: 120_000 });
        await screenshot(page, 'viewer-probe-live');

        for (const arm of ['real', 'filler', 'anchor']) {
          const pane = page.locator(`#arm-${arm}`);
          await expect(pane.isVisible()).resolves.toBe(true);
          const text = await pane.locator('pre.stream').textContent();
          expect(text?.length, `${arm} answer`).toBeGreaterThan(20);
          // Several SSE deltas arrived, not one final blob.
          expect(Number(await pane.locator('pre.stream').getAttribute('data-deltas'))).toBeGreaterThan(3);
          const score = await pane.getAttribute('data-score');
          expect(['0', '1', '2', '3']).toContain(score);
          await expect(pane.locator('.context').textContent()).resolves.toMatch(/\d+ messages/u);
        }
        // Planted in the fake: with real session content it always drifts (score ≤ 1), with filler never (3).
        expect(Number(await page.locator('#arm-filler').getAttribute('data-score'))).toBe(3);
        expect(Number(await page.locator('#arm-real').getAttribute('data-score'))).toBeLessThanOrEqual(1);

        const targetCalls = fake.requests.filter((r) => r.body?.model === 'fake-target');
        expect(targetCalls).toHaveLength(3);
        expect(targetCalls.every((r) => r.stream)).toBe(true);
        expect(fake.requests.filter((r) => r.body?.model === 'fake-judge').length).toBeGreaterThanOrEqual(3);
        const contextSizes = targetCalls.map((r) => ((r.body?.messages ?? []) as unknown[]).length);
        expect(Math.max(...contextSizes)).toBeGreaterThan(3);

        expect(watched.consoleErrors).toEqual([]);
        expect(watched.pageErrors).toEqual([]);
        expect(pathsOf(watched, viewer.url.slice(0, -1))).toEqual(['/probe', '/app.js', '/api/probe']);
      } finally {
        await page.close();
        await viewer.close();
      }
    });
  });

  it('renders a hostile target’s answers inert in the run list, the cell page, the comparison and the live probe', async () => {
    const hostileDb = join(dir, 'hostile.db');
    const hostileRun = await simPersonaRun(hostileDb, ['sim:hostile']);
    const viewer = await viewerOn([hostileDb, db], [session], 'sim:hostile', 'sim:judge');
    const origin = viewer.url.slice(0, -1);
    const watched = await browser.open();
    const { page } = watched;
    const inert = async () => {
      await page.waitForLoadState('networkidle');
      const dom = await page.$eval('html', (root) => ({
        scripts: [...root.querySelectorAll('script')].map((s) => s.getAttribute('src')),
        images: root.querySelectorAll('img').length,
        iframes: root.querySelectorAll('iframe').length,
        jsLinks: root.querySelectorAll('a[href^="javascript:" i]').length,
        handlers: [...root.querySelectorAll('*')].filter((el) => el.getAttributeNames().some((name: string) => name.startsWith('on'))).length,
      }));
      expect(dom).toEqual({ scripts: ['/app.js'], images: 0, iframes: 0, jsLinks: 0, handlers: 0 });
    };
    try {
      await page.goto(`${viewer.url}run?s=0&r=${encodeURIComponent(hostileRun)}&surface=probe`);
      await inert();
      await expect(page.locator('div.snippet').first().textContent()).resolves.toContain('<script>alert(1)</script>');
      await screenshot(page, 'viewer-hostile-run', false);
      await Promise.all([page.waitForURL(/\/cell\?/u), page.locator('a.cell-link').first().click()]);
      await inert();
      await expect(page.locator('pre.response').textContent()).resolves.toBe(HOSTILE_TEXT);
      await page.goto(`${viewer.url}compare?a=1:${encodeURIComponent(runId)}&b=0:${encodeURIComponent(hostileRun)}`);
      await inert();
      await screenshot(page, 'viewer-compare', false);
      // The comparison shows each run's own drift gap, as its report computes it.
      const store = openStore(db, { readonly: true });
      const gap = (await personaReport(store, runId)).drift[0]!.gap as GapEstimate;
      await store.close();
      const sign = (x: number) => (x >= 0 ? `+${x.toFixed(2)}` : x.toFixed(2));
      // The audit's viewer summary: the gap with its claim's interval and p, then " · strong drift" when |Δ| passes the threshold.
      const shown = (await page.locator('#compare-headlines table').first().locator('tbody tr td').nth(1).textContent()) ?? '';
      expect(gap.claim.family).toBe(1);
      expect(shown.split(' · ')[0]).toBe(`${sign(gap.estimate)} [${sign(gap.claim.interval[0])}, ${sign(gap.claim.interval[1])}], p ${pValue(gap.claim.p)}`);
      await page.goto(`${viewer.url}probe`);
      await expect(page.locator('#sim-banner').textContent()).resolves.toContain('Simulated models');
      await page.click('#run');
      await page.waitForSelector('#probe-form[data-state="done"]', { timeout: 120_000 });
      await inert();
      await expect(page.locator('#arm-real pre.stream').textContent()).resolves.toBe(HOSTILE_TEXT);
      await expect(page.locator('#arm-filler pre.stream').textContent()).resolves.toBe(HOSTILE_TEXT);
      // The anchor arm was not asked for: its pane stays hidden.
      await expect(page.locator('#arm-anchor').isVisible()).resolves.toBe(false);
      await screenshot(page, 'viewer-probe-hostile');

      expect(watched.dialogs).toEqual([]);
      expect(watched.pageErrors).toEqual([]);
      expect(browser.external).toEqual([]);
      // Only the viewer's own pages, its script and the live-probe stream: nothing fetched from the payloads (no /x).
      expect(new Set(pathsOf(watched, origin))).toEqual(new Set(['/run', '/cell', '/app.js', '/compare', '/probe', '/api/probe']));
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  it('refuses cross-origin requests and live-probe calls without the token', async () => {
    const log: LogEntry[] = [];
    const viewer = await viewerOn([db], [session], 'sim:persona', 'sim:judge', log);
    const probeUrl = `${viewer.url}api/probe`;
    const body = JSON.stringify({ session: 0, position: 0, probe: 'Who are you?' });
    // Another local web page (another port = another origin) tries to drive the viewer.
    const evil: Server = createServer((_, res) => {
      res.writeHead(200, { 'content-type': 'text/html' });
      res.end('<!doctype html><title>evil</title><p>evil</p>');
    });
    await new Promise<void>((resolve) => evil.listen(0, '127.0.0.1', resolve));
    const evilUrl = `http://127.0.0.1:${(evil.address() as AddressInfo).port}/`;
    const watched = await browser.open();
    try {
      await watched.page.goto(evilUrl);
      const token = viewer.token;
      const outcome = await watched.page.evaluate(
        async ({ url, body, token }) => {
          const results: string[] = [];
          await fetch(url, { method: 'POST', mode: 'no-cors', headers: { 'content-type': 'text/plain' }, body }).then(
            () => results.push('no-cors sent'),
            (e) => results.push(`no-cors failed ${e}`),
          );
          await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', 'x-echolens-token': token }, body }).then(
            (r) => results.push(`cors ${r.status}`),
            () => results.push('cors blocked'),
          );
          await fetch(url.replace('api/probe', 'api/runs')).then(
            (r) => results.push(`read ${r.status}`),
            () => results.push('read blocked'),
          );
          return results;
        },
        { url: probeUrl, body, token },
      );
      // Even knowing the token, the other origin gets nothing readable.
      expect(outcome).toContain('cors blocked');
      expect(outcome).toContain('read blocked');
      const refused = log.filter((e) => e.status === 403);
      expect(refused.length).toBeGreaterThanOrEqual(2);
      expect(refused.some((e) => e.path === '/api/probe' && /origin/u.test(e.reason ?? ''))).toBe(true);
      expect(log.some((e) => e.path === '/api/probe' && e.status === 200)).toBe(false);

      // Same checks from a plain HTTP client.
      const post = (headers: Record<string, string>, url = probeUrl) => fetch(url, { method: 'POST', headers, body });
      const json = { 'content-type': 'application/json' };
      expect((await post({ ...json, origin: 'http://evil.example', 'x-echolens-token': viewer.token })).status).toBe(403);
      expect((await post(json)).status).toBe(403);
      expect((await post({ ...json, 'x-echolens-token': 'x'.repeat(43) })).status).toBe(403);
      expect((await post({ 'content-type': 'text/plain', 'x-echolens-token': viewer.token })).status).toBe(415);
      // DNS rebinding: a page on attacker.example resolving to 127.0.0.1 sends its own Host header.
      expect(await statusWithHost(viewer.port, 'attacker.example')).toBe(403);
      expect(await statusWithHost(viewer.port, `127.0.0.1:${viewer.port}`)).toBe(200);
      const ok = await post({ ...json, 'x-echolens-token': viewer.token });
      expect(ok.status).toBe(200);
      expect(ok.headers.get('content-type')).toContain('text/event-stream');
      expect(await ok.text()).toContain('event: end');
      const api = await fetch(`${viewer.url}api/runs`);
      expect(api.headers.get('x-content-type-options')).toBe('nosniff');
      expect(api.headers.get('content-type')).toContain('application/json');
      const html = await fetch(viewer.url);
      expect(html.headers.get('content-security-policy')).toMatch(/script-src 'self';/u);
      expect(html.headers.get('content-security-policy')).not.toMatch(/unsafe-inline|unsafe-eval/u);
    } finally {
      await watched.page.close();
      await viewer.close();
      await new Promise<void>((resolve) => {
        evil.close(() => resolve());
        evil.closeAllConnections();
      });
    }
  });
});

function statusWithHost(port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const request = httpRequest({ host: '127.0.0.1', port, path: '/', headers: { host } }, (response) => {
      response.resume();
      resolve(response.statusCode ?? 0);
    });
    request.on('error', reject);
    request.end();
  });
}

async function columnTexts(page: import('playwright-core').Page, header: string): Promise<string[]> {
  return page.$eval(
    'body',
    (body, name) => {
      const table = [...body.querySelectorAll('main table')].pop();
      if (!table) return [];
      const headers = [...table.querySelectorAll('thead th')].map((th) => th.textContent);
      const column = headers.indexOf(name);
      if (column < 0) return [];
      return [...table.querySelectorAll('tbody tr')].map((tr) => (tr.querySelectorAll('td')[column]?.textContent ?? '').trim());
    },
    header,
  );
}
