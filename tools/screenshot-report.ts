/**
 * Screenshots of HTML reports at 1400 and 800 px wide, with the page height and any
 * horizontal overflow, for looking at a report before and after a change:
 *   npx tsx tools/screenshot-report.ts <report.html> <name> [more.html name …]
 * Writes test-artifacts/<name>-<width>.png (gitignored) and prints one line per shot.
 */
import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { ARTIFACTS, launchBrowser, screenshot } from '../test/browser/browser.js';

const args = process.argv.slice(2);
if (args.length === 0 || args.length % 2 !== 0) {
  console.error('usage: tsx tools/screenshot-report.ts <report.html> <name> [<report.html> <name> …]');
  process.exit(2);
}
const browser = await launchBrowser();
try {
  for (let i = 0; i < args.length; i += 2) {
    const file = resolve(args[i] as string);
    const name = args[i + 1] as string;
    for (const width of [1400, 800]) {
      const { page } = await browser.open();
      await page.setViewportSize({ width, height: 900 });
      await page.goto(pathToFileURL(file).href, { waitUntil: 'load' });
      const size = await page.evaluate(() => ({
        height: document.documentElement.scrollHeight,
        scrollWidth: document.documentElement.scrollWidth,
        clientWidth: document.documentElement.clientWidth,
        charts: document.querySelectorAll('svg.marks').length,
      }));
      const shot = await screenshot(page, `${name}-${width}`);
      await screenshot(page, `${name}-${width}-first-screen`, false);
      if (process.env.FIGURES) {
        const figures = page.locator('figure.chart');
        for (let k = 0; k < (await figures.count()); k++) await figures.nth(k).screenshot({ path: `${ARTIFACTS}/${name}-${width}-figure${k + 1}.png` });
      }
      console.log(
        `${name} @${width}px: page height ${size.height} px, scroll width ${size.scrollWidth} (viewport ${size.clientWidth})${size.scrollWidth > size.clientWidth ? ' HORIZONTAL OVERFLOW' : ''}, ${size.charts} charts → ${shot}`,
      );
      await page.close();
    }
  }
} finally {
  await browser.close();
}
