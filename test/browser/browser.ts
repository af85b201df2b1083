import { existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { packageRoot } from '../../src/core/version.js';

/**
 * Debian's chromium driven by playwright-core, with a fresh profile, no
 * background networking, and every request outside 127.0.0.1 / file: aborted
 * and recorded (tests reach no other host).
 */

export const CHROMIUM = process.env.ECHOLENS_CHROMIUM ?? '/usr/bin/chromium';
export const ARTIFACTS = join(packageRoot(), 'test-artifacts');

const ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

export interface WatchedPage {
  page: Page;
  consoleErrors: string[];
  pageErrors: string[];
  failedRequests: string[];
  requests: string[];
  dialogs: string[];
}

export interface BrowserSession {
  context: BrowserContext;
  /** Requests to hosts other than 127.0.0.1 (aborted). */
  external: string[];
  open(): Promise<WatchedPage>;
  close(): Promise<void>;
}

function isLocal(url: string): boolean {
  if (url.startsWith('file:') || url.startsWith('data:') || url === 'about:blank') return true;
  try {
    return new URL(url).hostname === '127.0.0.1';
  } catch {
    return false;
  }
}

export async function launchBrowser(): Promise<BrowserSession> {
  if (!existsSync(CHROMIUM)) {
    throw new Error(
      `browser tests need Debian's chromium at ${CHROMIUM}, which is missing: install it (apt-get install chromium) or point ECHOLENS_CHROMIUM at a Chromium binary`,
    );
  }
  const profile = mkdtempSync(join(tmpdir(), 'echolens-chromium-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    args: ARGS,
    headless: true,
    viewport: { width: 1280, height: 900 },
  });
  const external: string[] = [];
  await context.route('**/*', (route) => {
    const url = route.request().url();
    if (isLocal(url)) return route.continue();
    external.push(url);
    return route.abort();
  });
  for (const page of context.pages()) await page.close();
  return {
    context,
    external,
    async open() {
      const page = await context.newPage();
      const watched: WatchedPage = { page, consoleErrors: [], pageErrors: [], failedRequests: [], requests: [], dialogs: [] };
      page.on('console', (message) => {
        if (message.type() === 'error') watched.consoleErrors.push(message.text());
      });
      page.on('pageerror', (error) => watched.pageErrors.push(error.message));
      page.on('request', (request) => watched.requests.push(request.url()));
      page.on('requestfailed', (request) => watched.failedRequests.push(`${request.url()} ${request.failure()?.errorText ?? ''}`));
      page.on('dialog', (dialog) => {
        watched.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
        void dialog.dismiss();
      });
      return watched;
    },
    async close() {
      await context.close();
      rmSync(profile, { recursive: true, force: true });
    },
  };
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<string> {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path: file, fullPage });
  return file;
}
