import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import '../audits.js';
import { listAudits } from '../experiment/registry.js';
import { PROVIDERS } from '../models/providers.js';
import { defaultHtmlReport } from './commands/report.js';
import { runCliInProcess as cli } from './testing/run-cli.js';

// Help texts are generated from the registries: every provider the model registry knows, every
// registered audit, and the file `report` really writes by default.
describe('help texts from the registries', { timeout: 120_000 }, () => {
  it('persona run --help and memory run --help list every provider of the model registry', async () => {
    for (const group of ['persona', 'memory']) {
      const help = (await cli([group, 'run', '--help'])).stdout;
      for (const provider of PROVIDERS) expect(help, `${group} run --help lists ${provider.name}`).toContain(`${provider.name}:<`);
      for (const name of ['google', 'vertex', 'bedrock']) expect(help).toContain(`${name}:<model>`);
    }
  });

  it('report --help names every registered audit and the default HTML file report writes', async () => {
    const run = await cli(['report', '--help']);
    const help = run.stdout.replace(/\s+/gu, ' ');
    const audits = listAudits().map((a) => a.command);
    expect(audits.length).toBeGreaterThanOrEqual(3);
    for (const command of audits) expect(help).toContain(`echolens ${command} run`);
    expect(help).toContain(`registered audit: ${audits.join(', ')}`);
    expect(help).not.toMatch(/every persona and memory run/);
    expect(help).toContain('runs/x.db → runs/x.report.html');
    expect(defaultHtmlReport('runs/x.db')).toBe('runs/x.report.html');
  });

  it('report without --out writes the file the help names', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-help-report-'));
    expect((await cli(['demo', '--out-dir', dir])).code).toBe(0);
    const db = readdirSync(dir).find((f) => f.endsWith('.db'));
    expect(db).toBeDefined();
    const store = join(dir, db as string);
    const expected = defaultHtmlReport(store);
    rmSync(expected, { force: true });
    const report = await cli(['report', store]);
    expect(report.code).toBe(0);
    expect(existsSync(expected)).toBe(true);
  });
});
