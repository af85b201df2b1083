import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { memoryRuns, personaRuns } from '../../testing/audit-runs.js';
import { runCliInProcess } from '../testing/run-cli.js';

describe('echolens compare', { timeout: 240_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-compare-cli-'));
  const a = join(dir, 'a.db');
  const b = join(dir, 'b.db');
  const memory = join(dir, 'memory.db');
  let personaA: string;
  let personaB: string;
  beforeAll(async () => {
    [personaA] = (await personaRuns(a, ['sim:persona'])) as [string];
    [personaB] = (await personaRuns(b, ['sim:persona-null'])) as [string];
    await memoryRuns(memory, ['sim:memory']);
  }, 240_000);

  it('compares the latest persona runs of two stores with a B − A interval (markdown and JSON)', async () => {
    const md = await runCliInProcess(['compare', a, b, '--bootstrap', '300']);
    expect(md.code, md.stderr).toBe(0);
    expect(md.stdout).toContain(`run ${personaA} in ${a}`);
    expect(md.stdout).toMatch(
      /\| drift gap Δ \(filler − real\) \| sim:persona · judge sim:judge ⇄ sim:persona-null · judge sim:judge \| [+-]\d\.\d\d \| [+-]\d\.\d\d \| -\d\.\d\d \[-\d\.\d\d, -\d\.\d\d\] \| \d+ positions \|/u,
    );
    const json = await runCliInProcess(['compare', a, b, '--bootstrap', '300', '--format', 'json']);
    const parsed = JSON.parse(json.stdout) as { pairs: Array<{ b: { run: string }; comparison: { rows: Array<{ result: { ci: [number, number] } }> } }> };
    expect(parsed.pairs[0]!.b.run).toBe(personaB);
    expect(parsed.pairs[0]!.comparison.rows[0]!.result.ci[1]).toBeLessThan(0);
  });

  it('refuses runs of different audits with exit 2 and a clear message', async () => {
    const stores = await runCliInProcess(['compare', a, memory]);
    expect(stores.code).toBe(2);
    expect(stores.stderr).toMatch(/holds persona runs and .*memory\.db holds memory runs; compare only runs of the same audit/u);
    expect(stores.stdout).toBe('');
    const runs = await runCliInProcess(['compare', a, memory, '--run-a', personaA, '--run-b', 'nope']);
    expect(runs.code).toBe(2);
    expect(runs.stderr).toContain('--run-b: no run nope');
  });
});
