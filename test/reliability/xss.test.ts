// XSS payloads as model output, shown in the viewer's pages in a real browser (chromium
// driven by playwright-core): no dialog, no page error, no handler or script of theirs in
// the DOM, nothing fetched for them. Skipped, saying why, only when no browser is installed.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createAdapter } from '../../src/models/create-adapter.js';
import { registerSimProfile } from '../../src/models/sim-registry.js';
import { startViewer } from '../../src/report/viewer/server.js';
import { openStore } from '../../src/store/run-store.js';
import { CHROMIUM, launchBrowser } from '../browser/browser.js';
import { registerTestSims, simPersonaRun } from '../browser/fixtures.js';
import { FULL } from './size.js';

const BASE = [
  '<script>alert(1)</script>',
  '<img src=x onerror=alert(2)>',
  '<svg/onload=alert(3)>',
  '<iframe srcdoc="<script>alert(4)</script>"></iframe>',
  '<a href="javascript:alert(5)">x</a>',
  '"><script>alert(6)</script>',
  "'><img src=x onerror=alert(7)>",
  '<body onload=alert(8)>',
  '<details open ontoggle=alert(9)>',
  '<math><mtext></mtext><mglyph><style><img src=x onerror=alert(10)>',
  '</textarea><script>alert(11)</script>',
  '</pre><script>alert(12)</script>',
  '<object data="javascript:alert(13)">',
  '<embed src="javascript:alert(14)">',
  '<meta http-equiv="refresh" content="0;url=javascript:alert(15)">',
  '<base href="javascript:alert(16)//">',
  '<style>@import "http://127.0.0.1:1/x.css";</style>',
  '[x](javascript:alert(17))',
  '{{constructor.constructor("alert(18)")()}}',
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a template-injection payload, on purpose
  '${alert(19)}',
  '\u003cscript\u003ealert(20)\u003c/script\u003e',
];
// The full size adds case, entity and whitespace variants of every payload (the campaign used 77).
const PAYLOADS = FULL ? BASE.flatMap((p) => [p, p.toUpperCase(), p.replace(/</g, '&lt;'), p.replace(/ /g, '\t'), p.replace(/alert/g, 'confirm')]) : BASE;
const TEXT = PAYLOADS.join('\n');
const CELL_PAGES = FULL ? 40 : 3;

describe.skipIf(!existsSync(CHROMIUM))('XSS payloads in the viewer, in a real browser', () => {
  it(`${PAYLOADS.length} payloads stay inert on the run and cell pages`, async () => {
    registerTestSims();
    registerSimProfile({ name: 'xss-storm', description: 'SIMULATION: answers every request with XSS payloads', answer: () => ({ text: TEXT }) });
    const dir = mkdtempSync(join(tmpdir(), 'echolens-xss-'));
    const db = join(dir, 'xss.db');
    const runId = await simPersonaRun(db, ['sim:xss-storm']);
    const viewer = await startViewer({
      stores: [{ file: db, store: openStore(db, { readonly: true }) }],
      sessions: [],
      target: createAdapter('sim:xss-storm'),
      judge: createAdapter('sim:judge'),
      port: 0,
    });
    const browser = await launchBrowser();
    try {
      const watched = await browser.open();
      const { page } = watched;
      let pages = 0;
      const inert = async () => {
        await page.waitForLoadState('networkidle');
        pages++;
        const dom = await page.$eval('html', (root) => ({
          scripts: [...root.querySelectorAll('script')].map((s) => s.getAttribute('src')),
          // The run page draws the audit's charts (SVG made from the analysis' numbers, not from
          // model output): SVG is allowed there only, and nothing inside it may embed or link.
          foreign: [...root.querySelectorAll('img,iframe,object,embed,svg,math,base,meta[http-equiv]')]
            .filter((el) => !(el.tagName.toLowerCase() === 'svg' && el.closest('#charts')))
            .map((el) => el.outerHTML.slice(0, 80)),
          chartEmbeds: root.querySelectorAll('#charts script, #charts foreignObject, #charts a, #charts image, #charts use').length,
          jsLinks: root.querySelectorAll('a[href^="javascript:" i]').length,
          handlers: [...root.querySelectorAll('*')].filter((el) => el.getAttributeNames().some((name: string) => name.startsWith('on'))).length,
        }));
        expect(dom).toEqual({ scripts: ['/app.js'], foreign: [], chartEmbeds: 0, jsLinks: 0, handlers: 0 });
      };
      await page.goto(`${viewer.url}run?s=0&r=${encodeURIComponent(runId)}&surface=probe`);
      await inert();
      const links = await page.locator('a.cell-link').evaluateAll((as, n) => as.slice(0, n).map((a) => a.getAttribute('href') ?? ''), CELL_PAGES);
      expect(links.length).toBeGreaterThan(0);
      for (const link of links) {
        await page.goto(new URL(link, page.url()).href);
        await inert();
        await expect(page.locator('pre.response').textContent()).resolves.toBe(TEXT);
      }
      expect(watched.dialogs).toEqual([]);
      expect(watched.pageErrors).toEqual([]);
      expect(browser.external).toEqual([]);
      console.log(
        `[reliability xss] ${PAYLOADS.length} payloads on ${pages} viewer pages: ${watched.dialogs.length} dialogs, ${watched.pageErrors.length} page errors, ${browser.external.length} external requests`,
      );
      await page.close();
    } finally {
      await browser.close();
      await viewer.close();
    }
  }, 240_000);
});

if (!existsSync(CHROMIUM)) {
  console.log(`[reliability xss] skipped: no browser at ${CHROMIUM} (apt-get install chromium, or set ECHOLENS_CHROMIUM)`);
}
