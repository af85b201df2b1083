// `redactResponses: true` (issue #40): personal data a model writes in its answers is replaced
// before the answers are stored, so reports and exported archives of the run never hold it.
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../src/cli/testing/run-cli.js';
import { registerSimProfile } from '../../src/models/sim-registry.js';
import { personaConfigSchema } from '../../src/persona-drift/config.js';
import { runPersona } from '../../src/persona-drift/run.js';
import { DEMO_SESSION, registerTestSims } from '../browser/fixtures.js';

const PII = [
  'Maria Gonzalez',
  '+1 415-555-0132',
  '1600 Pennsylvania Avenue, Springfield, IL 62704',
  '4111 1111 1111 1111',
  'DE89 3704 0044 0532 0130 00',
  '203.0.113.7',
];
const ANSWER = `I asked Maria Gonzalez (call +1 415-555-0132) to ship it to 1600 Pennsylvania Avenue, Springfield, IL 62704; she paid with 4111 1111 1111 1111 from DE89 3704 0044 0532 0130 00 at 203.0.113.7.`;

async function run(db: string, redactResponses: boolean): Promise<string> {
  registerTestSims();
  registerSimProfile({ name: 'pii-echo', description: 'SIMULATION: answers with personal data', answer: () => ({ text: ANSWER }) });
  const config = personaConfigSchema.parse({
    sessions: [DEMO_SESSION],
    positions: [{ steps: [30] }],
    probes: { categories: ['coding_self'], paraphrases: 1 },
    targets: ['sim:pii-echo'],
    judges: ['sim:judge'],
    analysis: { B: 200 },
    ...(redactResponses ? { redactResponses: true } : {}),
  });
  await runPersona(config, db, { progress: false, signal: new AbortController().signal });
  const store = new Database(db, { readonly: true });
  try {
    return (store.prepare("SELECT coalesce(text, '') FROM cells WHERE model = 'sim:pii-echo'").pluck().all() as string[]).join('\n');
  } finally {
    store.close();
  }
}

describe('redactResponses: true', { timeout: 300_000 }, () => {
  it('stores answers with <PERSON>, <PHONE>, <ADDRESS>, <CARD>, <IBAN>, <IP> in place of the data; without it they are kept', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-redact-responses-'));
    const plain = await run(join(dir, 'plain.db'), false);
    expect(plain).toContain('Maria Gonzalez');
    const db = join(dir, 'redacted.db');
    const stored = await run(db, true);
    expect(stored.length).toBeGreaterThan(0);
    for (const value of PII) expect(stored).not.toContain(value);
    for (const placeholder of ['<PERSON>', '<PHONE>', '<ADDRESS>', '<CARD>', '<IBAN>', '<IP>']) expect(stored).toContain(placeholder);
    // The exported archive of the run carries the redacted answers.
    const out = join(dir, 'export');
    const exported = await runCliInProcess(['persona', 'export', '--layout', 'contextecho', db, out]);
    expect(exported.code).toBe(0);
    const files: string[] = [];
    const walk = (d: string) => {
      for (const e of readdirSync(d, { withFileTypes: true })) e.isDirectory() ? walk(join(d, e.name)) : files.push(join(d, e.name));
    };
    walk(out);
    const text = files.map((f) => readFileSync(f, 'utf8')).join('\n');
    expect(text).toContain('<PERSON>');
    for (const value of PII) expect(text).not.toContain(value);
  });
});
