/**
 * Session reader throughput and memory.
 *
 * Generates a synthetic Claude Code transcript (300 MB; BENCH_SMOKE=1: ~5 MB) in a temp dir —
 * prompts, thinking, text, tool calls, multi-line tool output with quotes, tabs, backslashes and
 * some non-ASCII (so lines are full of JSON escapes, as real ones are), random-looking uuids —
 * then, each in its own child process so peak RSS is the reader's own:
 *   - baseline: read the file and split it into decoded lines, no parsing (the practical limit);
 *   - summary: stream-parse into a Session in counting mode (`content: 'none'`, what `list` uses:
 *     the file is read into the WebAssembly scanner's memory, where each line is validated and,
 *     when plain, read whole with its ids filed; see src/sessions/json-scan.ts);
 *   - full: stream-parse keeping all message text (`content: 'full'`, what prefixes need).
 * Prints MB/s (wall and CPU time), peak RSS and parse/baseline ratios, for each run and for
 * the best of the two runs per mode. Targets (issue 5) apply to counting mode (`summary`):
 * CPU-time rate ≥ 50% of the baseline's (CPU time: the machine may be shared) and < 150 MB
 * peak RSS. Full-content mode keeps every message text by design; its memory grows with the
 * transcript and is reported without a target.
 */
import { spawnSync } from 'node:child_process';
import { createWriteStream, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { readFileLines } from '../src/sessions/read-lines.js';
import { readSession } from '../src/sessions/read.js';

type Mode = 'baseline' | 'summary' | 'full';
interface ChildResult {
  mode: Mode;
  seconds: number;
  /** User + system CPU seconds of the child's read (less sensitive to a busy machine than wall time). */
  cpuSeconds: number;
  bytes: number;
  lines: number;
  maxRssMb: number;
  check: string;
}

const here = fileURLToPath(import.meta.url);

async function child(mode: Mode, file: string): Promise<void> {
  const start = process.hrtime.bigint();
  const cpuStart = process.cpuUsage();
  let lines = 0;
  let check = '';
  let bytes = 0;
  if (mode === 'baseline') {
    let chars = 0;
    const result = await readFileLines(file, {
      line: (_n, text) => {
        lines += 1;
        chars += text.length;
      },
      warn: () => {},
    });
    bytes = result.bytes;
    check = `${chars} chars`;
  } else {
    const session = await readSession(file, { content: mode === 'summary' ? 'none' : 'full', subagents: false });
    lines = session.lines;
    bytes = session.bytes;
    check = `agentSteps ${session.counters.agentSteps}, messages ${session.counters.messages}, compactions ${session.compactions.length}, warnings ${session.warnings.length}`;
  }
  const seconds = Number(process.hrtime.bigint() - start) / 1e9;
  const cpu = process.cpuUsage(cpuStart);
  const cpuSeconds = (cpu.user + cpu.system) / 1e6;
  const maxRssMb = process.resourceUsage().maxRSS / 1024;
  const out: ChildResult = { mode, seconds, cpuSeconds, bytes, lines, maxRssMb, check };
  process.stdout.write(`${JSON.stringify(out)}\n`);
}

/** Deterministic PRNG so every run writes the same transcript. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORDS = 'the of and to in is for that with on file test function return const value error line import export type result check update fix'.split(' ');

function prose(random: () => number, chars: number): string {
  const out: string[] = [];
  let n = 0;
  while (n < chars) {
    const w = WORDS[Math.floor(random() * WORDS.length)]!;
    out.push(w);
    n += w.length + 1;
    // Paragraphs, as model text has them (each newline is a `\n` escape in the JSON line).
    if (random() < 0.02) out.push('\n\n');
  }
  return out.join(' ');
}

const CODE_LINES = [
  '  const value = check("file", 42);',
  '\treturn result.error ?? "none";',
  'import { update } from "./line.js";',
  '// fix: the type of the "value" field',
  'export function test(line: string): boolean {',
  '  if (path === "C:\\Users\\dev") return false;',
  '  console.log("r\u00e9sultat: " + value + " \u2713");',
  '}',
];

/** Tool output: numbered lines of code with quotes, tabs, backslashes and some non-ASCII. */
function toolOutput(random: () => number, chars: number): string {
  const out: string[] = [];
  let n = 0;
  for (let line = 1; n < chars; line += 1) {
    const text = random() < 0.3 ? prose(random, 30 + Math.floor(random() * 60)) : CODE_LINES[Math.floor(random() * CODE_LINES.length)]!;
    const numbered = `${String(line).padStart(5)}\t${text}`;
    out.push(numbered);
    n += numbered.length + 1;
  }
  return out.join('\n');
}

/**
 * A realistic mix: prompts, split assistant messages (thinking/text/tool_use), tool results of
 * 0.1–40 KB (code with escapes), progress, snapshots, compactions; random-looking uuids.
 */
async function generate(file: string, targetBytes: number): Promise<void> {
  const random = rng(7);
  const stream = createWriteStream(file);
  let written = 0;
  let parent: string | null = null;
  let t = Date.parse('2026-03-01T09:00:00Z');
  // Random-looking v4 uuids, as Claude Code writes them (deterministic: drawn from the seeded generator).
  const hex = (digits: number): string => Array.from({ length: digits }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
  const uuid = (): string => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
  const base = (type: string, extra: Record<string, unknown>): Record<string, unknown> => {
    const id = uuid();
    t += 1000 + Math.floor(random() * 5000);
    const record = { parentUuid: parent, isSidechain: false, userType: 'external', cwd: '/home/dev/proj', sessionId: 'bench-session', version: '2.1.152', gitBranch: 'main', type, uuid: id, timestamp: new Date(t).toISOString(), ...extra };
    parent = id;
    return record;
  };
  const emit = async (record: unknown): Promise<void> => {
    const line = `${JSON.stringify(record)}\n`;
    written += Buffer.byteLength(line);
    if (!stream.write(line)) await new Promise<void>((resolve) => stream.once('drain', () => resolve()));
  };
  let turn = 0;
  while (written < targetBytes) {
    turn += 1;
    await emit(base('user', { message: { role: 'user', content: `Please ${prose(random, 60 + Math.floor(random() * 300))}` } }));
    const steps = 2 + Math.floor(random() * 10);
    for (let s = 0; s < steps && written < targetBytes; s += 1) {
      const messageId = `msg_${turn}_${s}`;
      const usage = { input_tokens: 10, cache_creation_input_tokens: 300, cache_read_input_tokens: 40_000, output_tokens: 200 };
      const assistant = (content: unknown[]): Record<string, unknown> =>
        base('assistant', { requestId: `req_${turn}_${s}`, message: { id: messageId, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content, stop_reason: null, usage } });
      if (random() < 0.4) await emit(assistant([{ type: 'thinking', thinking: prose(random, 200 + Math.floor(random() * 1500)), signature: 'sig' }]));
      if (random() < 0.6) await emit(assistant([{ type: 'text', text: prose(random, 50 + Math.floor(random() * 600)) }]));
      const toolId = `toolu_${turn}_${s}`;
      await emit(assistant([{ type: 'tool_use', id: toolId, name: random() < 0.5 ? 'Bash' : 'Read', input: { command: prose(random, 40) } }]));
      if (random() < 0.3) await emit(base('progress', { data: { type: 'hook_progress', hookEvent: 'PostToolUse' }, toolUseID: toolId }));
      const size = random() < 0.1 ? 10_000 + Math.floor(random() * 30_000) : 100 + Math.floor(random() * 3000);
      const output = toolOutput(random, size);
      await emit(base('user', { message: { role: 'user', content: [{ tool_use_id: toolId, type: 'tool_result', content: output }] }, toolUseResult: { stdout: output.slice(0, 200), stderr: '', interrupted: false, isImage: false } }));
    }
    await emit(base('assistant', { message: { id: `msg_${turn}_end`, type: 'message', role: 'assistant', model: 'claude-sonnet-4-5-20250929', content: [{ type: 'text', text: prose(random, 100 + Math.floor(random() * 800)) }], usage: { input_tokens: 1, output_tokens: 90 } } }));
    if (random() < 0.2) await emit({ type: 'file-history-snapshot', messageId: `m${turn}`, snapshot: { trackedFileBackups: {} } });
    if (turn % 400 === 0) {
      const logical = parent;
      parent = null;
      await emit(base('system', { subtype: 'compact_boundary', content: 'Conversation compacted', logicalParentUuid: logical, compactMetadata: { trigger: 'auto', preTokens: 160_000 } }));
      await emit(base('user', { isCompactSummary: true, message: { role: 'user', content: `This session is being continued from a previous conversation that ran out of context. ${prose(random, 4000)}` } }));
    }
  }
  await new Promise<void>((resolve, reject) => stream.end((error?: Error | null) => (error ? reject(error) : resolve())));
}

/**
 * The children run a plain-JS bundle of this file when esbuild (installed with tsx) is there,
 * so peak RSS is the reader's and not the TypeScript loader's; otherwise they run through tsx.
 */
async function childCommand(dir: string): Promise<{ args: string[]; runtime: string }> {
  try {
    const esbuild = (await import('esbuild')) as { build: (options: Record<string, unknown>) => Promise<unknown> };
    const outfile = join(dir, 'sessions-bench.mjs');
    await esbuild.build({ entryPoints: [here], bundle: true, platform: 'node', format: 'esm', outfile, logLevel: 'error', external: ['esbuild'] });
    return { args: [outfile], runtime: 'node (esbuild bundle)' };
  } catch {
    return { args: ['--import', 'tsx', here], runtime: 'node --import tsx' };
  }
}

function runChild(command: string[], mode: Mode, file: string): ChildResult {
  const result = spawnSync(process.execPath, [...command, '--child', mode, file], { encoding: 'utf8', maxBuffer: 1 << 20 });
  if (result.status !== 0) throw new Error(`child ${mode} failed (${result.status}): ${result.stderr}`);
  return JSON.parse(result.stdout.trim().split('\n').at(-1)!) as ChildResult;
}

async function main(): Promise<void> {
  const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';
  const target = smoke ? 5 * 1024 * 1024 : 300 * 1024 * 1024;
  const dir = mkdtempSync(join(tmpdir(), 'echolens-bench-sessions-'));
  const file = join(dir, 'bench-session.jsonl');
  try {
    const genStart = Date.now();
    await generate(file, target);
    const size = statSync(file).size;
    console.log(`transcript: ${(size / 1024 / 1024).toFixed(1)} MB synthetic Claude Code session, generated in ${((Date.now() - genStart) / 1000).toFixed(1)} s`);
    const command = await childCommand(dir);
    console.log(`children: ${command.runtime}; each mode twice, the faster run reported (peak RSS: the larger)`);
    const best = new Map<Mode, ChildResult>();
    for (let round = 0; round < 2; round += 1) {
      for (const mode of ['baseline', 'summary', 'full'] as Mode[]) {
        const r = runChild(command.args, mode, file);
        const mb = r.bytes / 1024 / 1024;
        console.log(`  run ${round + 1} ${mode.padEnd(9)} wall ${(mb / r.seconds).toFixed(1).padStart(7)} MB/s  CPU ${(mb / r.cpuSeconds).toFixed(1).padStart(7)} MB/s  peak RSS ${r.maxRssMb.toFixed(0).padStart(4)} MB`);
        const prior = best.get(mode);
        if (!prior || r.seconds < prior.seconds) best.set(mode, { ...r, maxRssMb: Math.max(r.maxRssMb, prior?.maxRssMb ?? 0) });
        else best.set(mode, { ...prior, cpuSeconds: Math.min(prior.cpuSeconds, r.cpuSeconds), maxRssMb: Math.max(r.maxRssMb, prior.maxRssMb) });
      }
    }
    const base = best.get('baseline')!;
    const rate = (r: ChildResult): number => r.bytes / 1024 / 1024 / r.seconds;
    const cpuRate = (r: ChildResult): number => r.bytes / 1024 / 1024 / r.cpuSeconds;
    console.log('mode      wall MB/s  ratio   CPU MB/s  ratio   peak RSS   result');
    for (const mode of ['baseline', 'summary', 'full'] as Mode[]) {
      const r = best.get(mode)!;
      console.log(
        `${mode.padEnd(9)} ${rate(r).toFixed(1).padStart(9)}  ${(rate(r) / rate(base)).toFixed(2).padStart(5)}  ${cpuRate(r).toFixed(1).padStart(8)}  ${(cpuRate(r) / cpuRate(base)).toFixed(2).padStart(5)}   ${r.maxRssMb.toFixed(0).padStart(5)} MB   ${r.check}`,
      );
    }
    const summary = best.get('summary')!;
    const ratio = cpuRate(summary) / cpuRate(base);
    const verdict = (ok: boolean): string => (smoke ? 'not judged' : ok ? 'met' : 'NOT met');
    console.log(
      `targets (counting mode, summary): CPU-time rate ≥ 0.50 of line splitting: ${ratio.toFixed(2)} ${verdict(ratio >= 0.5)} (wall-time ratio ${(rate(summary) / rate(base)).toFixed(2)}); < 150 MB peak RSS: ${summary.maxRssMb.toFixed(0)} MB ${verdict(summary.maxRssMb < 150)}`,
    );
    // A 5 MB file is mostly fixed costs (compiling the JavaScript and WebAssembly that read it): the targets are for 300 MB.
    if (smoke) console.log('smoke mode: the targets are judged on the 300 MB transcript only (fixed start-up costs dominate a 5 MB one)');
    console.log('full-content mode keeps all message text by design: no memory target (its RSS grows with the transcript)');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--gen') {
  await generate(process.argv[3]!, Number(process.argv[4]));
} else if (process.argv[2] === '--child') {
  await child(process.argv[3] as Mode, process.argv[4]!);
} else {
  await main();
}
