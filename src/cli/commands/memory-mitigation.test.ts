import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Command } from 'commander';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { registerMemoryMitigation } from './memory-mitigation.js';

const fixture = join(import.meta.dirname, '../../memory-drift/mitigation/__fixtures__/dpo-sim.yaml');

function program(): { root: Command; out: string[] } {
  const root = new Command().exitOverride();
  const memory = root.command('memory').exitOverride();
  registerMemoryMitigation(memory);
  for (const command of memory.commands) command.exitOverride();
  const out: string[] = [];
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  return { root, out };
}

afterEach(() => {
  vi.restoreAllMocks();
});

describe('echolens memory mitigation commands', () => {
  it('registers dpo-pairs, references, reward-server, evaluate and grpo-data on the memory group, each with help', () => {
    const { root } = program();
    const memory = root.commands.find((c) => c.name() === 'memory')!;
    expect(memory.commands.map((c) => c.name())).toEqual(['dpo-pairs', 'references', 'reward-server', 'evaluate', 'grpo-data']);
    for (const command of memory.commands) expect(command.description().length).toBeGreaterThan(20);
  });

  it('dpo-pairs then references, end to end with simulated models', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-cli-dpo-'));
    const db = join(dir, 'nested', 'dpo.db');
    const out = join(dir, 'out');
    const first = program();
    await first.root.parseAsync(['node', 'echolens', 'memory', 'dpo-pairs', fixture, '--db', db, '--out', out, '--set', 'questions.limit=2']);
    expect(first.out.join('')).toMatch(/6 prompts, 60 candidates/);
    expect(existsSync(join(out, 'trl', 'mixed.jsonl')) && existsSync(join(out, 'openrlhf', 'quick.jsonl')) && existsSync(join(out, 'data-card.md'))).toBe(true);
    vi.restoreAllMocks();

    const refs = join(dir, 'refs.jsonl');
    const second = program();
    await second.root.parseAsync(['node', 'echolens', 'memory', 'references', fixture, '--db', db, '--labeler', 'sim:labeler', '-o', refs, '--set', 'questions.limit=2']);
    expect(second.out.join('')).toMatch(/wrote \d+ references/);
    const lines = readFileSync(refs, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as { question_id: string; symbols: string[] });
    expect(lines.length).toBeGreaterThan(0);
    for (const line of lines) expect(line.symbols.length).toBeGreaterThan(0);
  });

  it('rejects a malformed --model with a named argument', async () => {
    const refs = join(mkdtempSync(join(tmpdir(), 'echolens-cli-eval-')), 'refs.jsonl');
    writeFileSync(refs, '{"question_id":"q1","symbols":["Protective/Security and stability"]}\n');
    const { root } = program();
    await expect(
      root.parseAsync(['node', 'echolens', 'memory', 'evaluate', '--references', refs, '--labeler', 'sim:labeler', '--model', 'no-equals-sign']),
    ).rejects.toThrow(/--model/);
  });
});
