import { readdirSync, readFileSync, statSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { useTempDir } from '../testing/temp-dir.js';
import { expectBase64BlockRedacted } from './__fixtures__/base64-block.js';
import { redactFile } from './redact-file.js';
import { verifyFile } from './verify/verify-file.js';

const tmp = useTempDir('echolens-redact-holes-scale-');

describe('huge strings are scanned linearly', () => {
  it('an 8 MB base64 image block is redacted without a stack overflow, and the output verifies clean', async () => {
    await expectBase64BlockRedacted(tmp.path, 8192);
  }, 300_000);
});

describe('identity terms and discovery (whole terms, host-like names only)', () => {
  it('a large clean code corpus gets at most 1 replacement per 100 KB, and verifies clean', async () => {
    // zod ships its TypeScript sources (~1.4 MB without its tests): real code that holds no secret.
    const root = join(process.cwd(), 'node_modules', 'zod', 'src');
    const files: string[] = [];
    const walk = (folder: string) => {
      for (const entry of readdirSync(folder)) {
        const path = join(folder, entry);
        if (statSync(path).isDirectory()) {
          if (!entry.includes('test')) walk(path);
        } else if (entry.endsWith('.ts') && !entry.endsWith('.d.ts') && !entry.includes('.test.')) files.push(path);
      }
    };
    walk(root);
    files.sort();
    let bytes = 0;
    const lines: string[] = [];
    files.forEach((file, i) => {
      const content = readFileSync(file, 'utf8');
      bytes += Buffer.byteLength(content);
      const name = file.slice(root.length + 1);
      lines.push(
        JSON.stringify({
          type: 'assistant',
          message: { content: [{ type: 'tool_use', id: `toolu_${i}`, name: 'Read', input: { file_path: `src/${name}` } }] },
        }),
      );
      lines.push(JSON.stringify({ type: 'user', message: { content: [{ type: 'tool_result', tool_use_id: `toolu_${i}`, content }] } }));
    });
    expect(bytes).toBeGreaterThan(800_000);
    const input = join(tmp.path, 'clean-code.jsonl');
    await writeFile(input, `${lines.join('\n')}\n`);
    const output = join(tmp.path, 'clean-code.out.jsonl');
    const report = await redactFile(input, output);
    const per100k = report.replacements / (bytes / 102_400);
    console.log(
      `[clean code] ${files.length} files, ${bytes} bytes: ${report.replacements} replacements (${per100k.toFixed(2)} per 100 KB) ${JSON.stringify(report.counts)}`,
    );
    expect(per100k).toBeLessThanOrEqual(1);
    expect((await verifyFile(output)).residualCount / (bytes / 102_400)).toBeLessThanOrEqual(1);
  }, 300_000);
});
