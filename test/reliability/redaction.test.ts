// Redaction holes, held out: credentials in the forms people paste (redaction-corpus.ts) must
// not survive `sessions redact` and must be flagged by `sessions verify`, written raw, inside a
// Claude Code tool result and inside a Codex tool call's arguments (escaped twice). And the
// other side: real source code that holds no credential gets at most 1 false positive per MB.
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { redactFile } from '../../src/sessions/redact/redact-file.js';
import { redactJsonLine, redactText } from '../../src/sessions/redact/redactor.js';
import { scanText, unescapeJsonText } from '../../src/sessions/redact/verify/scan.js';
import { verifyFile } from '../../src/sessions/redact/verify/verify-file.js';
import { useTempDir } from '../../src/sessions/testing/temp-dir.js';
import { CLEAN_LOOKALIKES, PASSWORD_TEMPLATES, SECRET_CASES, type SecretCase, passwordStyles } from './redaction-corpus.js';
import { SEED, seeded, size } from './size.js';

const tmp = useTempDir('echolens-redaction-');

interface Rendering {
  name: string;
  render: (text: string) => string;
  redact: (line: string) => string;
}

const RENDERINGS: Rendering[] = [
  { name: 'raw', render: (text) => text, redact: (line) => redactText(line).text },
  {
    name: 'claude tool_result',
    render: (text) => JSON.stringify({ type: 'user', message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01Ab', content: text }] } }),
    redact: (line) => redactJsonLine(line).text,
  },
  {
    name: 'codex function_call arguments',
    render: (text) =>
      JSON.stringify({
        timestamp: '2026-12-01T10:00:00.000Z',
        type: 'response_item',
        payload: { type: 'function_call', name: 'shell', arguments: JSON.stringify({ command: ['bash', '-lc', text] }), call_id: 'call_Ab12' },
      }),
    redact: (line) => redactJsonLine(line).text,
  },
];

function windows(text: string, size: number): string[] {
  const out: string[] = [];
  for (let i = 0; i + size <= text.length; i++) out.push(text.slice(i, i + size));
  return out;
}

/** A piece of `secret` that is still in `output` (and is not ordinary context of the row), else null. */
function survivor(secret: string, output: string, context: string): string | null {
  const forms = [secret, JSON.stringify(secret).slice(1, -1), JSON.stringify(JSON.stringify(secret).slice(1, -1)).slice(1, -1)];
  for (const form of forms) {
    if (output.includes(form)) return form;
    if (form.length < 10) continue;
    for (const piece of windows(form, 8)) if (output.includes(piece) && !context.includes(piece)) return piece;
  }
  return null;
}

/** Whether a verify hit on `line` overlaps the place `secret` stands in it (any hit when escaping hides the place). */
function flagged(secret: string, line: string): boolean {
  const plain = unescapeJsonText(line);
  const hits = scanText(line);
  const at = plain.indexOf(secret);
  if (at < 0) return hits.length > 0;
  return hits.some((hit) => hit.start < at + secret.length && hit.end > at);
}

describe('planted credentials in many forms', () => {
  const kinds = new Set(SECRET_CASES.map((c) => c.kind));

  it('the corpus is broad: every kind in several forms', () => {
    expect(kinds.size).toBeGreaterThanOrEqual(12);
    for (const kind of kinds) expect(SECRET_CASES.filter((c) => c.kind === kind).length, kind).toBeGreaterThanOrEqual(4);
  });

  it('0 survivors of redact and 0 misses of verify, in every rendering', () => {
    const survivors: string[] = [];
    const misses: string[] = [];
    let checks = 0;
    for (const row of SECRET_CASES) {
      const context = row.secrets.reduce((text, secret) => text.split(secret).join('\u0001'), row.text);
      for (const rendering of RENDERINGS) {
        const line = rendering.render(row.text);
        const output = rendering.redact(line);
        for (const secret of row.secrets) {
          checks++;
          const left = survivor(secret, output, context);
          if (left !== null) survivors.push(`${row.kind} / ${row.form} / ${rendering.name}: "${left}" left in ${JSON.stringify(output).slice(0, 200)}`);
          if (!flagged(secret, line)) misses.push(`${row.kind} / ${row.form} / ${rendering.name}`);
        }
      }
    }
    console.log(
      `[redaction corpus] ${SECRET_CASES.length} rows in ${kinds.size} kinds × ${RENDERINGS.length} renderings = ${checks} planted values: ${survivors.length} survivors of redact, ${misses.length} misses of verify`,
    );
    expect(survivors).toEqual([]);
    expect(misses).toEqual([]);
  });

  const perStyle = size(4, 40);
  it(`generated passwords of 5 styles (${perStyle} each) in ${PASSWORD_TEMPLATES.length} forms: 0 survivors, 0 misses`, () => {
    const random = seeded(SEED + 29);
    const styles = passwordStyles(random);
    const users = ['deploy', 'admin', 'svc-ci', 'octo'];
    const survivors: string[] = [];
    const misses: string[] = [];
    let checks = 0;
    for (const template of PASSWORD_TEMPLATES) {
      for (const style of styles) {
        for (let k = 0; k < perStyle; k++) {
          const password = style();
          const text = template.replaceAll('{u}', users[Math.floor(random() * users.length)]!).replaceAll('{p}', password);
          for (const rendering of RENDERINGS) {
            checks++;
            const line = rendering.render(text);
            if (survivor(password, rendering.redact(line), '') !== null) survivors.push(`${rendering.name}: ${text}`);
            if (!flagged(password, line)) misses.push(`${rendering.name}: ${text}`);
          }
        }
      }
    }
    console.log(
      `[redaction generated] ${checks} planted passwords (seed ${SEED + 29}): ${survivors.length} survivors of redact, ${misses.length} misses of verify`,
    );
    expect(survivors).toEqual([]);
    expect(misses).toEqual([]);
  });

  it('redact → verify: the redacted corpus file verifies clean', async () => {
    const input = join(tmp.path, 'corpus.jsonl');
    await writeFile(input, `${SECRET_CASES.map((row: SecretCase) => RENDERINGS[1]!.render(row.text)).join('\n')}\n`);
    const output = join(tmp.path, 'corpus.out.jsonl');
    await redactFile(input, output);
    const report = await verifyFile(output);
    expect(report.residuals.map((r) => `${r.line}:${r.kind}`)).toEqual([]);
  });
});

describe('false positives on real code that holds no credential', () => {
  it.each(CLEAN_LOOKALIKES.map((text) => [text.split('\n')[0]!.slice(0, 60), text]))('look-alike kept as is and not flagged: %s', (_name, text) => {
    for (const rendering of RENDERINGS) {
      const line = rendering.render(text);
      expect(rendering.redact(line), rendering.name).toBe(line);
      expect(
        scanText(line).map((hit) => `${hit.kind}:${hit.value}`),
        rendering.name,
      ).toEqual([]);
    }
  });

  it('redact replaces and verify flags at most 1 span per MB of clean source', async () => {
    // This repository's own sources and the TypeScript compiler as shipped (a large body of real
    // JavaScript). Left out: tests and fixtures, and the redactor's own rule book (src/sessions/redact
    // and the redact command's help), which spell out example credentials and paths on purpose.
    const files: string[] = [];
    const walk = (folder: string) => {
      for (const entry of readdirSync(folder).sort()) {
        const path = join(folder, entry);
        if (statSync(path).isDirectory()) {
          if (entry !== '__fixtures__' && entry !== 'testing' && !path.endsWith(join('sessions', 'redact'))) walk(path);
        } else if (entry.endsWith('.ts') && !/\.(?:test|bench)\.ts$/.test(entry) && entry !== 'sessions-redact.ts') files.push(path);
      }
    };
    walk(join(process.cwd(), 'src'));
    files.push(join(process.cwd(), 'node_modules', 'typescript', 'lib', '_tsc.js'));
    let bytes = 0;
    const lines: string[] = [];
    files.forEach((file, i) => {
      const content = readFileSync(file, 'utf8');
      bytes += Buffer.byteLength(content);
      // As a coding agent reads it: 400-line tool results.
      const fileLines = content.split('\n');
      for (let start = 0; start < fileLines.length; start += 400) {
        lines.push(
          JSON.stringify({
            type: 'user',
            message: {
              role: 'user',
              content: [{ type: 'tool_result', tool_use_id: `toolu_${i}_${start}`, content: fileLines.slice(start, start + 400).join('\n') }],
            },
          }),
        );
      }
    });
    const megabytes = bytes / (1024 * 1024);
    expect(megabytes).toBeGreaterThan(5);
    const input = join(tmp.path, 'clean.jsonl');
    await writeFile(input, `${lines.join('\n')}\n`);
    const redacted = await redactFile(input, join(tmp.path, 'clean.out.jsonl'));
    const verified = await verifyFile(input);
    // Loopback and private dev-server addresses (`http://127.0.0.1:8000/v1` as a default base URL)
    // are replaced by design, in code as anywhere: they are counted and printed, but apart.
    const DEV_SERVER = new Set(['host', 'port']);
    const apart = (counts: Record<string, number>) => Object.entries(counts).reduce((n, [kind, count]) => n + (DEV_SERVER.has(kind) ? 0 : count), 0);
    const redactFalse = apart(redacted.counts);
    const verifyFalse = apart(verified.countsByKind);
    const rate = (n: number) => `${(n / megabytes).toFixed(2)}/MB`;
    console.log(
      `[redaction false positives] ${files.length} files, ${megabytes.toFixed(2)} MB of clean code: redact ${redactFalse} false positives = ${rate(redactFalse)} (${redacted.replacements} replacements with dev-server addresses: ${JSON.stringify(redacted.counts)}); verify ${verifyFalse} = ${rate(verifyFalse)} (${verified.residualCount} findings with dev-server addresses: ${JSON.stringify(verified.countsByKind)})`,
    );
    expect(redactFalse / megabytes).toBeLessThanOrEqual(1);
    expect(verifyFalse / megabytes).toBeLessThanOrEqual(1);
  }, 300_000);
});
