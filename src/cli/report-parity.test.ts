import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { memoryConfigSchema } from '../memory-drift/config.js';
import { runMemory } from '../memory-drift/run.js';
import { continuationRuns, personaRuns } from '../testing/audit-runs.js';
import { runCliInProcess } from './testing/run-cli.js';

// One analysis path (issue 29 item 9): each audit's own `report` command and `echolens report`
// must carry the same analysis — every key and every Markdown line of the audit's section, warnings
// included (the memory seed-independence warning was missing from `echolens report`).

const dir = mkdtempSync(join(tmpdir(), 'echolens-report-parity-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const dbs = { persona: join(dir, 'persona.db'), memory: join(dir, 'memory.db'), continuation: join(dir, 'continuation.db') };

beforeAll(async () => {
  await personaRuns(dbs.persona, ['sim:persona']);
  await continuationRuns(dbs.continuation, ['sim:continuation']);
  // Fixed seeds: every perturbed sample shares its seed with the reference, so the report must warn.
  const config = memoryConfigSchema.parse({
    targets: ['sim:memory'],
    labeler: 'sim:labeler',
    questions: { limit: 6 },
    conditions: ['filler', 'age', 'bereavement'],
    k: 1,
    sampleSeeds: 'fixed',
    analysis: { B: 200 },
  });
  await runMemory(config, dbs.memory, { progress: false, signal: new AbortController().signal });
}, 300_000);

/** The lines of a Markdown text that carry content (tables, prose, headings without their level). */
const lines = (md: string) =>
  md
    .split('\n')
    .map((l) => l.replace(/^#+\s*/u, '').trim())
    .filter((l) => l !== '');

describe('each audit’s report command and `echolens report` give the same report', { timeout: 300_000 }, () => {
  for (const audit of ['persona', 'memory', 'continuation'] as const) {
    it(`${audit}: the same analysis in JSON and the same section lines in Markdown`, async () => {
      const db = dbs[audit];
      const ownJson = await runCliInProcess([audit, 'report', db, '--format', 'json']);
      expect(ownJson.code, ownJson.stderr).toBe(0);
      const genericJson = await runCliInProcess(['report', db, '--format', 'json']);
      expect(genericJson.code, genericJson.stderr).toBe(0);
      const own = JSON.parse(ownJson.stdout) as Record<string, unknown>;
      const analysis = (JSON.parse(genericJson.stdout) as { runs: Array<Record<string, Record<string, unknown>>> }).runs[0]![audit]!;
      expect(Object.keys(analysis).length).toBeGreaterThan(2);
      for (const [key, value] of Object.entries(analysis)) expect(own[key], `${audit} key ${key}`).toEqual(value);

      const ownMd = lines((await runCliInProcess([audit, 'report', db])).stdout);
      const genericMd = new Set(lines((await runCliInProcess(['report', db, '--format', 'md'])).stdout));
      // The audit's section (its title aside) is in both.
      // Its title line aside (each report names itself); the rest of the audit's section is in both.
      const section = ownMd.slice(1);
      expect(section.length).toBeGreaterThan(20);
      const missing = section.filter((l) => !genericMd.has(l));
      expect(missing, `${audit}: lines of \`${audit} report\` missing from \`echolens report\``).toEqual([]);
      if (audit === 'memory') {
        const warning = ownMd.find((l) => l.startsWith('Sampling: seeds `fixed` — **not independent**'));
        expect(warning).toBeDefined();
        expect(genericMd.has(warning!)).toBe(true);
        expect((analysis.sampling as { independent: boolean }).independent).toBe(false);
      }
    });
  }
});
