// Screenshots of every viewer page at 1400 and 800 px wide: the runs list, each run's page, its
// first cell, its analysis (and report, when the viewer serves one), a comparison and the demo.
// Usage: npx tsx tools/screenshots/viewer-pages.ts <store.db> <out-dir> <prefix>
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { createAdapter } from '../../src/models/create-adapter.js';
import { registerBuiltinSimProfiles } from '../../src/builtin-sims.js';
import { startViewer } from '../../src/report/viewer/server.js';
import { readSession } from '../../src/sessions/read.js';
import { openStore } from '../../src/store/run-store.js';

const [db, outDir, prefix] = process.argv.slice(2) as [string, string, string];
registerBuiltinSimProfiles();
mkdirSync(outDir, { recursive: true });
const viewer = await startViewer({
  stores: [{ file: db, store: openStore(db, { readonly: true }) }],
  sessions: [await readSession(join(import.meta.dirname, '..', '..', 'data', 'demo', 'claude-session.jsonl'))],
  target: createAdapter('sim:persona'),
  judge: createAdapter('sim:judge'),
  port: 0,
});
const browser = await chromium.launch({ executablePath: process.env.ECHOLENS_CHROMIUM ?? '/usr/bin/chromium', args: ['--no-sandbox', '--disable-gpu'] });
try {
  const runs = ((await (await fetch(`${viewer.url}api/runs`)).json()) as { runs: Array<{ id: string; experiment: string }> }).runs;
  const pages: Array<[string, string]> = [
    ['runs', viewer.url],
    ['demo', `${viewer.url}demo`],
  ];
  for (const run of runs) {
    const id = encodeURIComponent(run.id);
    pages.push([`run-${run.experiment}`, `${viewer.url}run?s=0&r=${id}`], [`analysis-${run.experiment}`, `${viewer.url}analysis?s=0&r=${id}`]);
  }
  if (runs.length >= 2) pages.push(['compare', `${viewer.url}compare?a=0:${encodeURIComponent(runs[0]!.id)}&b=0:${encodeURIComponent(runs[1]!.id)}`]);
  for (const width of [1400, 800]) {
    const page = await browser.newPage({ viewport: { width, height: 900 } });
    for (const [name, url] of pages) {
      await page.goto(url);
      await page.screenshot({ path: join(outDir, `${prefix}-${name}-${width}.png`), fullPage: true });
      await page.screenshot({ path: join(outDir, `${prefix}-${name}-${width}-top.png`) });
      if (name.startsWith('run-')) {
        const link = page.locator('a.cell-link').first();
        if ((await link.count()) > 0) {
          await link.click();
          await page.waitForLoadState();
          await page.screenshot({ path: join(outDir, `${prefix}-cell-${name.slice(4)}-${width}.png`), fullPage: true });
        }
      }
    }
    await page.close();
  }
  console.log(`${pages.length} pages × 2 widths → ${outDir}`);
} finally {
  await browser.close();
  await viewer.close();
}
