import { mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { encode } from 'gpt-tokenizer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildPlantedCorpus, escapeDepth, renderCorpus, renderLine, renderWithOneLeft } from './__fixtures__/planted-corpus.js';
import { redactFile } from './redact-file.js';
import { Redactor } from './redactor.js';
import { verifyFile } from './verify/verify-file.js';

const corpus = buildPlantedCorpus();
const original = renderCorpus(corpus);
let dir: string;
let redacted: string[];
let redactedText: string;

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function windows(text: string): Set<string> {
  const out = new Set<string>();
  for (let i = 0; i + 8 <= text.length; i++) out.add(text.slice(i, i + 8));
  return out;
}

/** The first 8-character window of a planted value that survives in `output`, if any. */
function survivingWindow(value: string, output: string, outputWindows: Set<string>, contextWindows: Set<string>): string | null {
  if (value.length < 8) {
    const word = new RegExp(`(?<![\\p{L}\\p{N}])${escapeRegex(value)}(?![\\p{L}\\p{N}])`, 'iu');
    return word.test(output) ? value : null;
  }
  for (const form of [value, escapeDepth(value, 1), escapeDepth(value, 2)]) {
    for (let i = 0; i + 8 <= form.length; i++) {
      const window = form.slice(i, i + 8);
      // Windows that are ordinary context elsewhere (`https://`, `ed25519 `) prove nothing.
      if (outputWindows.has(window) && !contextWindows.has(window)) return window;
    }
  }
  return null;
}

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'echolens-redact-corpus-'));
  await writeFile(join(dir, 'planted.jsonl'), `${original.join('\n')}\n`);
  const report = await redactFile(join(dir, 'planted.jsonl'), join(dir, 'redacted.jsonl'), {
    identities: corpus.identities,
    quotes: corpus.quotes,
  });
  redactedText = await readFile(join(dir, 'redacted.jsonl'), 'utf8');
  redacted = redactedText.split('\n').slice(0, -1);
  const classes = new Set(corpus.planted.map((p) => p.cls));
  const perClass: Record<string, number> = {};
  for (const p of corpus.planted) perClass[p.cls] = (perClass[p.cls] ?? 0) + 1;
  console.log(`[redact corpus] ${original.length} lines, ${corpus.planted.length} planted values in ${classes.size} classes: ${JSON.stringify(perClass)}`);
  console.log(`[redact corpus] replacements by class: ${JSON.stringify(report.counts)}`);
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('planted corpus', () => {
  it('is big and varied enough to mean something', () => {
    expect(corpus.planted.length).toBeGreaterThanOrEqual(300);
    const secretClasses = new Set(corpus.planted.map((p) => p.cls));
    expect(secretClasses.size).toBeGreaterThanOrEqual(12);
  });

  it('replaces 100% of planted values (no 8-character piece of any survives)', () => {
    const context = windows(corpus.lines.map((line) => renderLine(corpus, line, () => '\u0001')).join('\n'));
    const output = windows(redactedText);
    const survivors: string[] = [];
    for (const planted of corpus.planted) {
      const window = survivingWindow(planted.value, redactedText, output, context);
      if (window !== null) survivors.push(`${planted.cls} at line ${planted.line + 1}`);
    }
    const recall = 1 - survivors.length / corpus.planted.length;
    console.log(`[redact corpus] recall ${(recall * 100).toFixed(2)}% (${corpus.planted.length - survivors.length}/${corpus.planted.length})`);
    expect(survivors).toEqual([]);
  });

  it('keeps every line, every JSON line valid JSON with the same structure', () => {
    expect(redacted).toHaveLength(original.length);
    const shape = (value: unknown): unknown => {
      if (Array.isArray(value)) return value.map(shape);
      if (value !== null && typeof value === 'object') {
        return Object.fromEntries(Object.entries(value).map(([, v], i) => [String(i), shape(v)]));
      }
      return typeof value;
    };
    let jsonLines = 0;
    original.forEach((line, index) => {
      let parsed: unknown;
      try {
        parsed = JSON.parse(line);
      } catch {
        expect(redacted[index]!.length).toBeGreaterThan(0); // malformed lines are kept
        return;
      }
      jsonLines++;
      expect(shape(JSON.parse(redacted[index]!))).toEqual(shape(parsed));
    });
    expect(jsonLines).toBeGreaterThan(400);
  });

  it('keeps message, tool and request ids, UUIDs and commit hashes', () => {
    for (const id of ['msg_01', 'toolu_01', 'req_011C', 'call_', '"sessionId":"', 'commit_hash']) expect(redactedText).toContain(id);
    const uuids = original.join('\n').match(/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}/g) ?? [];
    expect(uuids.length).toBeGreaterThan(100);
    for (const uuid of uuids.slice(0, 50)) expect(redactedText).toContain(uuid);
  });

  it('verify reports the redacted corpus clean', async () => {
    const report = await verifyFile(join(dir, 'redacted.jsonl'), { identities: [...corpus.identities, ...corpus.verifierIdentities] });
    expect(report.residuals).toEqual([]);
    expect(report.clean).toBe(true);
    expect(report.lines).toBe(original.length);
  });

  it('verify fails on the original, unredacted corpus', async () => {
    const report = await verifyFile(join(dir, 'planted.jsonl'), { identities: corpus.identities });
    expect(report.clean).toBe(false);
    expect(report.residualCount).toBeGreaterThan(300);
  });
});

describe('one planted value left in', () => {
  // One variant per class (the first planted value of each class the verifier can know).
  const variants = new Map<string, number>();
  corpus.planted.forEach((planted, index) => {
    if (planted.verifyKinds.length > 0 && !variants.has(planted.cls)) variants.set(planted.cls, index);
  });

  it('covers at least 12 classes', () => {
    expect(variants.size).toBeGreaterThanOrEqual(12);
  });

  it.each([...variants.entries()])('verify names %s and its line, without printing it', async (cls, index) => {
    const planted = corpus.planted[index]!;
    const lines = renderWithOneLeft(corpus, redacted, index);
    const file = join(dir, `leak-${cls}.jsonl`);
    await writeFile(file, `${lines.join('\n')}\n`);
    const report = await verifyFile(file, { identities: [...corpus.identities, ...corpus.verifierIdentities] });
    expect(report.clean).toBe(false);
    const onLine = report.residuals.filter((r) => r.line === planted.line + 1);
    expect(onLine.map((r) => r.kind).some((kind) => planted.verifyKinds.includes(kind))).toBe(true);
    // Nothing else in the file is reported.
    expect(report.residuals.every((r) => r.line === planted.line + 1)).toBe(true);
    const printed = JSON.stringify(report);
    expect(survivingWindow(planted.value, printed, windows(printed), new Set())).toBeNull();
  });
});

describe('false positives on clean code and prose', () => {
  it('stays under 1 replacement per 100 lines and 1 per 10,000 tokens', async () => {
    const cleanDir = join(import.meta.dirname, '__fixtures__', 'clean');
    const files = (await readdir(cleanDir)).sort();
    let lines = 0;
    let tokens = 0;
    let replacements = 0;
    const byClass: Record<string, number> = {};
    const verifierHits: string[] = [];
    const outDir = join(dir, 'clean');
    await rm(outDir, { recursive: true, force: true });
    await import('node:fs/promises').then((fs) => fs.mkdir(outDir));
    for (const name of files) {
      const text = await readFile(join(cleanDir, name), 'utf8');
      // As raw text lines, and as a Claude Code tool_result carrying the whole file.
      const raw = new Redactor();
      raw.learn(text);
      for (const line of text.split('\n')) {
        const result = raw.redactText(line);
        lines++;
        tokens += encode(line).length;
        for (const [cls, count] of Object.entries(result.counts)) {
          byClass[cls] = (byClass[cls] ?? 0) + count;
          replacements += count;
        }
      }
      const envelope = JSON.stringify({
        type: 'user',
        message: { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01AbCdEfGhIjKlMnOpQrStUv', content: text }] },
      });
      const input = join(outDir, `${name}.jsonl`);
      await writeFile(input, `${envelope}\n`);
      const report = await redactFile(input, join(outDir, `${name}.redacted.jsonl`));
      expect(report.replacements).toBe(Object.values(report.counts).reduce((a, b) => a + b, 0));
      const verify = await verifyFile(join(outDir, `${name}.redacted.jsonl`));
      verifierHits.push(...verify.residuals.map((r) => `${name}:${r.kind}`));
    }
    const perLine = replacements / lines;
    const perKiloToken = (replacements / tokens) * 1000;
    console.log(
      `[redact false positives] ${lines} clean lines, ${tokens} tokens (o200k): ${replacements} replacements = ${perLine.toFixed(4)} per line, ${perKiloToken.toFixed(4)} per 1,000 tokens ${JSON.stringify(byClass)}; verifier findings on the redacted clean corpus: ${verifierHits.length}`,
    );
    expect(lines).toBeGreaterThanOrEqual(300);
    expect(perLine).toBeLessThan(0.01);
    expect(perKiloToken).toBeLessThan(0.1);
    expect(verifierHits).toEqual([]);
  });
});
