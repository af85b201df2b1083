import { type ChildProcess, spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../../src/audits.js';
import { packageRoot } from '../../src/core/version.js';
import { createAdapter } from '../../src/models/create-adapter.js';
import { personaConfigSchema } from '../../src/persona-drift/config.js';
import { runPersona } from '../../src/persona-drift/run.js';
import { startViewer, type ViewerServer } from '../../src/report/viewer/server.js';
import { openStore } from '../../src/store/run-store.js';
import { type BrowserSession, launchBrowser, screenshot } from './browser.js';
import { DEMO_SESSION, registerTestSims, simPersonaRun } from './fixtures.js';

/**
 * The viewer's first screens (issue 31): the run list says each run's verdict and whether it is
 * complete; a cell page opens on the prompt and the model's answer, labels folded, empty ones
 * hidden; `echolens view` with no path finds the stores under ./runs and ./echolens-demo.
 */

function viewerOn(dbs: string[]): Promise<ViewerServer> {
  return startViewer({
    stores: dbs.map((file) => ({ file, store: openStore(file, { readonly: true }) })),
    sessions: [],
    target: createAdapter('sim:persona'),
    judge: createAdapter('sim:judge'),
    port: 0,
  });
}

/** A persona run stopped before its first cell: the store holds an incomplete run. */
async function interruptedRun(db: string): Promise<string> {
  const config = personaConfigSchema.parse({
    name: 'stopped-early',
    sessions: [DEMO_SESSION],
    positions: [{ steps: [30, 50] }],
    probes: { categories: ['coding_self'], paraphrases: 1 },
    samples: 1,
    targets: ['sim:persona'],
    judges: ['sim:judge'],
  });
  const controller = new AbortController();
  controller.abort();
  const run = await runPersona(config, db, { progress: false, signal: controller.signal });
  expect(run.interrupted).toBe(true);
  return run.runId;
}

/** Starts `echolens view` (from source) in `cwd` with no store named; resolves with the URL and what it printed. */
function startViewCli(cwd: string): Promise<{ child: ChildProcess; url: string; stdout: string }> {
  const tsx = import.meta.resolve('tsx');
  const main = join(packageRoot(), 'src', 'cli', 'main.ts');
  const child = spawn(process.execPath, ['--import', tsx, main, 'view', '--port', '0', '--open-browser', 'never'], {
    cwd,
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  return new Promise((resolve, reject) => {
    let stdout = '';
    let stderr = '';
    const timer = setTimeout(() => reject(new Error(`view did not start: ${stdout}${stderr}`)), 60_000);
    child.stderr?.on('data', (d: Buffer) => {
      stderr += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      stdout += d.toString();
      const url = /echolens viewer: (http:\/\/127\.0\.0\.1:\d+\/)/u.exec(stdout)?.[1];
      if (url && stdout.includes('Ctrl-C')) {
        clearTimeout(timer);
        resolve({ child, url, stdout });
      }
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`view exited ${code}: ${stdout}${stderr}`));
    });
  });
}

function stop(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    if (child.exitCode !== null) return resolve();
    child.once('exit', () => resolve());
    child.kill('SIGTERM');
  });
}

describe('viewer first screens in chromium', { timeout: 300_000 }, () => {
  let browser: BrowserSession;
  let dir: string;
  let db: string;
  let runId: string;
  let stoppedId: string;

  beforeAll(async () => {
    browser = await launchBrowser();
    registerTestSims();
    registerBuiltinAudits();
    dir = mkdtempSync(join(tmpdir(), 'echolens-browser-first-'));
    db = join(dir, 'sim.db');
    runId = await simPersonaRun(db);
    stoppedId = await interruptedRun(db);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
  });

  it('the run list has a verdict and a status column: a complete run shows its verdict, an incomplete one says it has none', async () => {
    const viewer = await viewerOn([db]);
    const watched = await browser.open();
    const { page } = watched;
    try {
      await page.goto(viewer.url);
      const headers = await page.locator('table thead th').allTextContents();
      expect(headers).toContain('verdict');
      expect(headers).toContain('status');
      const done = page.locator('tr', { hasText: runId });
      await expect(done.locator('.run-status').textContent()).resolves.toBe('complete');
      // sim:persona plants drift: the headline verdict names the target and reads as an alert.
      const verdict = (await done.locator('.run-verdict').textContent()) ?? '';
      expect(verdict).toMatch(/^sim:persona/u);
      expect(verdict).not.toMatch(/no verdict/u);
      await expect(done.locator('.run-verdict').getAttribute('class')).resolves.toMatch(/tone-(alert|ok|neutral)/u);
      const stopped = page.locator('tr', { hasText: stoppedId });
      await expect(stopped.locator('.run-status').textContent()).resolves.toBe('incomplete');
      // The refusal the report and the gate print (run-completeness.ts).
      await expect(stopped.textContent()).resolves.toMatch(/incomplete run: .+ — re-run the same command to finish/u);
      await expect(stopped.locator('.run-verdict').textContent()).resolves.toBe('no verdict: the run is incomplete');
      await screenshot(page, 'viewer-run-list-verdicts', false);
      expect(watched.pageErrors).toEqual([]);
      expect(watched.consoleErrors).toEqual([]);
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  it('a cell page leads with the prompt and the response above the fold; the labels are folded and empty ones hidden', async () => {
    const viewer = await viewerOn([db]);
    const watched = await browser.open();
    const { page } = watched;
    try {
      await page.goto(viewer.url);
      await Promise.all([page.waitForURL(/\/run\?/u), page.locator('tr', { hasText: runId }).locator('a.run-link').click()]);
      await Promise.all([page.waitForURL(/\/cell\?/u), page.locator('a.cell-link').first().click()]);
      const viewport = page.viewportSize();
      const prompt = await page.locator('#prompt').boundingBox();
      const response = await page.locator('#response').boundingBox();
      expect(prompt).not.toBeNull();
      expect(response).not.toBeNull();
      // Prompt first, then the answer, and the answer starts on the first screen.
      expect((prompt?.y ?? 0) < (response?.y ?? 0)).toBe(true);
      expect(response?.y ?? Number.POSITIVE_INFINITY).toBeLessThan((viewport?.height ?? 900) - 40);
      await expect(page.locator('#response').textContent()).resolves.toMatch(/\S/u);
      await expect(page.locator('#prompt').textContent()).resolves.toMatch(/\S/u);
      // The labels come after the exchange, folded.
      const labels = page.locator('details#labels');
      await expect(labels.getAttribute('open')).resolves.toBeNull();
      await expect(labels.locator('table').isVisible()).resolves.toBe(false);
      const labelsBox = await labels.boundingBox();
      expect((labelsBox?.y ?? 0) > (response?.y ?? 0)).toBe(true);
      await screenshot(page, 'viewer-cell-first-screen', false);
      await labels.locator('summary').click();
      const values = await labels.locator('tbody tr td:nth-child(2)').allTextContents();
      expect(values.length).toBeGreaterThan(0);
      for (const value of values) expect(['', 'null', 'undefined']).not.toContain(value.trim());
      // The folded table says how many labels it holds.
      await expect(labels.locator('summary').textContent()).resolves.toMatch(new RegExp(`^Labels \\(${values.length}(; \\d+ empty hidden)?\\)$`, 'u'));
      await screenshot(page, 'viewer-cell-labels-open');
      expect(watched.pageErrors).toEqual([]);
      expect(watched.consoleErrors).toEqual([]);
    } finally {
      await page.close();
      await viewer.close();
    }
  });

  it('echolens view with no path finds the stores under ./runs and ./echolens-demo and lists their runs', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'echolens-view-discover-'));
    mkdirSync(join(cwd, 'runs'));
    mkdirSync(join(cwd, 'echolens-demo'));
    copyFileSync(db, join(cwd, 'runs', 'persona.db'));
    copyFileSync(db, join(cwd, 'echolens-demo', 'demo.db'));
    const { child, url, stdout } = await startViewCli(cwd);
    const watched = await browser.open();
    try {
      expect(stdout).toContain('no run.db given: found 2 stores under ./runs and ./echolens-demo: echolens-demo/demo.db, runs/persona.db');
      await watched.page.goto(url);
      await expect(watched.page.locator('tr', { hasText: runId }).count()).resolves.toBe(2);
      await screenshot(watched.page, 'viewer-discovered-stores', false);
    } finally {
      await watched.page.close();
      await stop(child);
    }
  });

  it('echolens view with no path and no store says how to make one', async () => {
    const cwd = mkdtempSync(join(tmpdir(), 'echolens-view-none-'));
    const { child, url, stdout } = await startViewCli(cwd);
    const watched = await browser.open();
    try {
      expect(stdout).toContain('no run.db given and no store found under ./runs and ./echolens-demo.');
      expect(stdout).toContain('make one: echolens demo');
      await watched.page.goto(url);
      await expect(watched.page.locator('main').textContent()).resolves.toMatch(/No runs: make a store with echolens demo/u);
    } finally {
      await watched.page.close();
      await stop(child);
    }
  });
});
