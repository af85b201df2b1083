// Fuzzed transcripts and configs, and planted secrets of the tricky classes in random
// contexts: bad input is always a clean EcholensError (exit 2), never a crash, and no
// planted secret survives redaction or escapes verification.
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadConfigFile } from '../../src/core/config-file.js';
import { isEcholensError } from '../../src/core/errors.js';
import { memoryConfigSchema } from '../../src/memory-drift/config.js';
import { redactFile } from '../../src/sessions/redact/redact-file.js';
import { verifyFile } from '../../src/sessions/redact/verify/verify-file.js';
import { SEED, seeded, size } from './size.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-fuzz-'));
const random = seeded(SEED + 2);
const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
const ALNUM = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';
const chars = (alphabet: string, n: number) => Array.from({ length: n }, () => pick([...alphabet])).join('');

function mutate(text: string): Buffer {
  const bytes = Buffer.from(text);
  const out: number[] = [...bytes];
  const edits = 1 + Math.floor(random() * 8);
  for (let i = 0; i < edits; i++) {
    const at = Math.floor(random() * (out.length + 1));
    const kind = random();
    if (kind < 0.3) out.splice(at, 1);
    else if (kind < 0.6) out.splice(at, 0, Math.floor(random() * 256));
    else if (kind < 0.8) out.splice(at, 0, ...Buffer.from(pick(['{', '}', '"', '\\', '\n', '\r\n', '\u0000', '\uFFFF', '\\u0000', '[', ']', '*a', '&a'])));
    else out.splice(at, Math.floor(random() * 20));
  }
  return Buffer.from(out);
}

const TRANSCRIPT = [
  { type: 'user', message: { role: 'user', content: 'cd /Users/qwertyuser/code/projx && export OPENAI_API_KEY=sk-proj-abcdefghijklmnopqrstuvwx1234' } },
  { type: 'assistant', message: { role: 'assistant', content: [{ type: 'text', text: 'ssh deploy@db-07.internal -p 2222' }] } },
]
  .map((line) => JSON.stringify(line))
  .join('\n');

describe('fuzzed inputs', () => {
  const cases = size(40, 1000);
  it(`${cases} mutated transcripts: redact and verify finish or refuse with an input error`, async () => {
    let refused = 0;
    for (let i = 0; i < cases; i++) {
      const input = join(dir, `t${i}.jsonl`);
      writeFileSync(input, mutate(TRANSCRIPT));
      for (const step of [() => redactFile(input, join(dir, `t${i}.out.jsonl`)), () => verifyFile(input)]) {
        try {
          await step();
        } catch (error) {
          if (!isEcholensError(error)) throw error;
          refused++;
        }
      }
    }
    console.log(`[reliability fuzz] ${cases} mutated transcripts: ${refused} clean refusals, 0 crashes`);
  }, 60_000);

  it(`${cases} mutated configs: a config error or a valid config, never anything else`, () => {
    const example = readFileSync(new URL('../../examples/memory-sim.yaml', import.meta.url), 'utf8');
    let errors = 0;
    for (let i = 0; i < cases; i++) {
      const file = join(dir, `c${i}.yaml`);
      writeFileSync(file, mutate(example));
      try {
        loadConfigFile(file, memoryConfigSchema);
      } catch (error) {
        if (!isEcholensError(error)) throw error;
        errors++;
      }
    }
    console.log(`[reliability fuzz] ${cases} mutated configs: ${errors} config errors, 0 crashes`);
  });
});

describe('planted secrets, tricky classes included', () => {
  const count = size(30, 500);
  it(`${count} planted secrets in random contexts: none survives, the output verifies clean`, async () => {
    const makers: Array<() => { text: string; secret: string }> = [
      () => {
        const key = `sk-ant-api03-${chars(ALNUM, 40)}`;
        const hex = Buffer.from(key).toString('hex');
        return { text: `blob ${hex} end`, secret: hex };
      },
      () => {
        const tail = chars(ALNUM, 30);
        return { text: `key = "sk-proj-${chars(ALNUM, 6)}" + "${tail}"`, secret: tail };
      },
      () => {
        const words = Array.from({ length: 4 }, () => chars('abcdefghijklmnopqrstuvwxyz', 6)).join(' ');
        return { text: JSON.stringify({ password: words }), secret: words };
      },
      () => {
        const key = `SK${chars('0123456789abcdef', 32)}`;
        return { text: `twilio ${key}`, secret: key };
      },
      () => {
        const token = `ghp_${chars(ALNUM, 36)}`;
        return { text: `git push https://${token}@github.com/o/r.git`, secret: token };
      },
      () => {
        const password = `${chars(ALNUM, 12)}-9`;
        return { text: `postgres://app:${password}@10.1.2.3:5432/db`, secret: password };
      },
    ];
    const planted: string[] = [];
    const lines: string[] = [];
    for (let i = 0; i < count; i++) {
      const { text, secret } = pick(makers)();
      planted.push(secret);
      const content = pick([text, `see: ${text}`, `\`${text}\``, `${text}\nnext line`]);
      lines.push(JSON.stringify({ type: pick(['user', 'assistant']), message: { content: [{ type: 'text', text: content }] } }));
    }
    const input = join(dir, 'planted.jsonl');
    writeFileSync(input, `${lines.join('\n')}\n`);
    const output = join(dir, 'planted.out.jsonl');
    const report = await redactFile(input, output);
    const text = readFileSync(output, 'utf8');
    const survivors = planted.filter((secret) => text.includes(secret));
    const verified = await verifyFile(output);
    console.log(
      `[reliability planted] ${count} planted secrets: ${report.replacements} replacements, ${survivors.length} survivors, verify ${verified.clean ? 'clean' : `found ${verified.residualCount}`}`,
    );
    expect(survivors).toEqual([]);
    expect(verified.residuals).toEqual([]);
    expect((await verifyFile(input)).residualCount).toBeGreaterThanOrEqual(new Set(planted).size * 0.9);
  }, 60_000);
});
