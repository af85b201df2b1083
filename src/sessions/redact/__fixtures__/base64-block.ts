import { randomBytes } from 'node:crypto';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { expect } from 'vitest';
import { redactFile } from '../redact-file.js';
import { verifyFile } from '../verify/verify-file.js';

/**
 * Redacts, in `dir`, a transcript holding a base64 image block of at least `kilobytes` KB three
 * times (an image source, a data: URL, a raw line) and checks that each is replaced and the output
 * verifies clean.
 */
export async function expectBase64BlockRedacted(dir: string, kilobytes: number): Promise<void> {
  const data = randomBytes((kilobytes * 1024 * 3) / 4).toString('base64');
  expect(data.length).toBeGreaterThanOrEqual(kilobytes * 1024);
  const lines = [
    { type: 'user', message: { content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data } }] } },
    { type: 'user', message: { content: `see data:application/pdf;base64,${data} ok` } },
  ];
  const input = join(dir, 'image.jsonl');
  await writeFile(input, `${lines.map((line) => JSON.stringify(line)).join('\n')}\nraw ${data.replace(/\+/g, 'a')} "x\n`);
  const output = join(dir, 'image.out.jsonl');
  const report = await redactFile(input, output);
  expect(report.counts.base64_data).toBe(3);
  const text = await readFile(output, 'utf8');
  expect(text.length).toBeLessThan(1000);
  expect(text).toContain('data:application/pdf;base64,<BASE64_DATA>');
  expect((await verifyFile(output)).clean).toBe(true);
}
