import { existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../testing/run-cli.js';
import { openStore } from '../../store/run-store.js';
import { writeContextEchoArchive } from '../../persona-drift/testing/contextecho-archive.js';

/** `echolens persona import | export --layout contextecho` through the CLI: exit codes, messages, files. */

const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-interchange-cli-'));
const writeArchive = (root: string) => writeContextEchoArchive(root);

describe('echolens persona import / export --layout contextecho', { timeout: 300_000 }, () => {
  it('imports, reports the reference block as JSON, and exports back to the same layout', async () => {
    const archive = join(dir, 'archive');
    writeArchive(archive);
    const db = join(dir, 'persona.db');
    const imported = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', archive, '--db', db, '--judge', 'claude-sonnet-4-6']);
    expect(imported.stderr).toBe('');
    expect(imported.code).toBe(0);
    expect(imported.stdout).toMatch(/30 responses, 30 verdicts \(30 per-cell files, 0 content-position files\).*procedure reference; no model was called/su);

    const out = join(dir, 'report.json');
    const report = await runCliInProcess(['persona', 'report', db, '--format', 'json', '-o', out]);
    expect(report.code).toBe(0);
    const json = JSON.parse(readFileSync(out, 'utf8')) as {
      reference: { arms: Array<{ target: string; arm: string; mean: number; positions: number; n: number }> };
    };
    const real = json.reference.arms.find((a) => a.arm === 'real');
    // Position means of (i + p) mod 4 over i = 0…4: 6/5, 7/5 and 8/5 at the three positions.
    expect(real).toMatchObject({ target: 'claude-haiku-4-5', positions: 3, n: 15 });
    expect(real?.mean).toBeCloseTo((6 / 5 + 7 / 5 + 8 / 5) / 3, 12);
    const md = await runCliInProcess(['persona', 'report', db]);
    expect(md.stdout).toContain("The verdict uses echolens's calibrated procedure");

    const exported = join(dir, 'exported');
    const exp = await runCliInProcess(['persona', 'export', '--layout', 'contextecho', db, exported]);
    expect(exp.code).toBe(0);
    const cell = JSON.parse(
      readFileSync(join(exported, 'results', 'probes_at_crosscompaction', 'claude-haiku-4-5', 'P3_post_C3', 'claude_session', 'C02.json'), 'utf8'),
    );
    expect(cell).toMatchObject({ probe_id: 'C02', arm: 'claude_session', position: 'P3_post_C3', score: 2, response_text: 'r C02', reason: 'why' });
    const again = await runCliInProcess(['persona', 'export', '--layout', 'contextecho', db, exported]);
    expect(again.code).toBe(2);
    expect(again.stderr).toMatch(/already holds an archive/u);
  });

  it('a bad file is exit 2 with the file and the field, no stack trace, and nothing imported', async () => {
    const archive = join(dir, 'bad');
    writeArchive(archive);
    const bad = join(archive, 'results', 'probes_at_crosscompaction', 'claude-haiku-4-5', 'P5_pre_C6', 'filler', 'C04.json');
    writeFileSync(bad, JSON.stringify({ ...JSON.parse(readFileSync(bad, 'utf8')), score: 'three' }));
    const db = join(dir, 'bad.db');
    const result = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', archive, '--db', db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/P5_pre_C6\/filler\/C04\.json.*score.*must be an integer/su);
    expect(result.stderr).not.toMatch(/\n\s+at /u);
    if (existsSync(db)) {
      const store = openStore(db, { readonly: true });
      expect(await store.listRuns()).toHaveLength(0);
      await store.close();
    }
    const layout = await runCliInProcess(['persona', 'import', '--layout', 'openai', archive, '--db', db]);
    expect(layout.code).toBe(2);
    expect(layout.stderr).toMatch(/unknown layout "openai"/u);
  });

  it('an archive without one judge verdict (every call failed) is exit 2 naming the archive, and nothing imported', async () => {
    const archive = join(dir, 'errors-only');
    mkdirSync(archive, { recursive: true });
    const failed = (ids: string[]) => ({ results: ids.map((probe_id) => ({ probe_id, error: 'rate limited' })) });
    writeFileSync(
      join(archive, 'CONTENT_POSITION_m.json'),
      JSON.stringify({ target_model: 'claude-haiku-4-5', per_condition: { claude_session: failed(['C01', 'C02']), filler: failed(['C01', 'C02']) } }),
    );
    const db = join(dir, 'errors-only.db');
    const result = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', archive, '--db', db]);
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(/errors-only.*no cell of the archive has a judge verdict \(4 cells read\)/su);
    expect(result.stderr).not.toMatch(/\n\s+at /u);
    if (existsSync(db)) {
      const store = openStore(db, { readonly: true });
      expect(await store.listRuns()).toHaveLength(0);
      await store.close();
    }
  });

  it('scrubs secrets from imported responses always, and personal data with --redact-responses (answers, verdict reasons, judge requests)', async () => {
    const key = `sk-proj-${'Ab3dEf6hIj9kLm2nOp5qRs8tUv1wXy4z'.repeat(2)}`;
    const plant = (root: string) => {
      writeArchive(root);
      const file = join(root, 'results', 'probes_at_crosscompaction', 'claude-haiku-4-5', 'P3_post_C3', 'claude_session', 'C02.json');
      const cell = JSON.parse(readFileSync(file, 'utf8'));
      writeFileSync(
        file,
        JSON.stringify({
          ...cell,
          response_text: `Use OPENAI_API_KEY=${key} and call Maria Gonzalez at +1 415-555-0132.`,
          reason: 'It quoted the phone +1 415-555-0132 of Maria Gonzalez.',
        }),
      );
    };
    const dump = (db: string) => readFileSync(db).toString('latin1');
    const plain = join(dir, 'plain-archive');
    plant(plain);
    const plainDb = join(dir, 'plain.db');
    expect((await runCliInProcess(['persona', 'import', '--layout', 'contextecho', plain, '--db', plainDb])).code).toBe(0);
    // Secrets never stored; personal data kept without the flag (the archive's text is the data).
    expect(dump(plainDb)).not.toContain(key);
    expect(dump(plainDb)).toContain('Maria Gonzalez');
    const redacted = join(dir, 'redacted-archive');
    plant(redacted);
    const db = join(dir, 'redacted.db');
    const result = await runCliInProcess(['persona', 'import', '--layout', 'contextecho', redacted, '--db', db, '--redact-responses']);
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
    const bytes = dump(db);
    for (const value of [key, 'Maria Gonzalez', '415-555-0132']) expect(bytes).not.toContain(value);
    const store = openStore(db, { readonly: true });
    try {
      const runId = (await store.listRuns())[0]!.id;
      const texts = (await store.cellResultsOfRun(runId)).map((c) => c.result.text ?? '');
      // The response and the verdict's reason, with the placeholders where the data was.
      expect(texts.filter((t) => t.includes('<PERSON>') && t.includes('<PHONE>'))).toHaveLength(2);
      expect(texts.some((t) => t.includes('<SECRET'))).toBe(true);
    } finally {
      await store.close();
    }
  });
});
