/**
 * Runs the seventh held-out PII corpus (issue #40) through the built CLI, as a user would:
 * `echolens sessions redact` on a Claude Code and a Codex transcript holding the planted items,
 * then `echolens sessions verify --json` on each output. Prints how many items survived redact
 * and how many of those sit on a line verify does not flag. Run `npm run build` first, then
 * `npx tsx tools/pii-heldout-cli.ts [--seed N] [dir]` (default: the corpus's own seed, a fresh
 * folder under the OS temp dir); another seed draws other values and templates from the same pools.
 */
import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { heldOutSurvives, transcriptHeader } from '../test/reliability/pii-heldout-corpus.js';
import { HELD_OUT7_SEED, heldOut7Records } from '../test/reliability/pii-heldout7-corpus.js';
import { seeded } from '../test/reliability/size.js';

const run = promisify(execFile);
const cli = new URL('../dist/cli/main.js', import.meta.url).pathname;
const args = process.argv.slice(2);
const seedAt = args.indexOf('--seed');
const seed = seedAt < 0 ? HELD_OUT7_SEED : Number(args.splice(seedAt, 2)[1]);
if (!Number.isSafeInteger(seed)) {
  console.error('--seed takes an integer');
  process.exit(2);
}
const dir = args[0] ?? (await mkdtemp(join(tmpdir(), 'echolens-pii7-cli-')));
await mkdir(dir, { recursive: true });
const records = heldOut7Records(seeded(seed));
console.log(`seed ${seed}`);

const files = { claude: [transcriptHeader('claude')], codex: [transcriptHeader('codex')] };
const where = records.map(({ tool, line }) => {
  files[tool].push(line);
  return files[tool].length;
});
const survivors: number[] = [];
const unflagged: number[] = [];
for (const tool of ['claude', 'codex'] as const) {
  const input = join(dir, `${tool}.jsonl`);
  const output = join(dir, `${tool}.redacted.jsonl`);
  await writeFile(input, `${files[tool].join('\n')}\n`);
  await run(process.execPath, [cli, 'sessions', 'redact', input, '-o', output]);
  // verify exits 1 when it finds residuals: that is a result, not a failure.
  const verified = await run(process.execPath, [cli, 'sessions', 'verify', output, '--json']).catch((e: { code?: number; stdout?: string }) => {
    if (e.code === 1 && e.stdout) return { stdout: e.stdout };
    throw e;
  });
  const report = JSON.parse(verified.stdout) as { truncated: boolean; residuals: Array<{ line: number }> };
  if (report.truncated) console.log(`${tool}: verify listed only part of its residuals; unflagged counts are an upper bound`);
  const flagged = new Set(report.residuals.map((r) => r.line));
  const redacted = (await readFile(output, 'utf8')).split('\n');
  records.forEach((r, i) => {
    if (r.tool !== tool || !heldOutSurvives(r.item, redacted[where[i]! - 1] ?? '')) return;
    survivors.push(i);
    if (!flagged.has(where[i]!)) unflagged.push(i);
  });
}
const kinds = [...new Set(records.map((r) => r.item.kind))];
const byKind = (list: number[]) =>
  kinds.map((k) => `${k} ${list.filter((i) => records[i]!.item.kind === k).length}/${records.filter((r) => r.item.kind === k).length}`).join(', ');
console.log(`files in ${dir}`);
console.log(
  `${records.length} planted; ${survivors.length} survived redact (${((100 * survivors.length) / records.length).toFixed(1)}%: ${byKind(survivors)})`,
);
console.log(`${survivors.length - unflagged.length} of them flagged by verify, ${unflagged.length} unflagged`);
for (const i of survivors.sort((a, b) => a - b))
  console.log(`  ${records[i]!.item.kind} ${JSON.stringify(records[i]!.item.value)}${unflagged.includes(i) ? ' (unflagged)' : ' (flagged)'}`);
