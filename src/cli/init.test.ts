import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinAudits } from '../audits.js';
import { getAudit } from '../experiment/registry.js';
import { runCliInProcess } from './testing/run-cli.js';

registerBuiltinAudits();

describe('echolens init', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-init-'));

  it.each(['persona', 'memory', 'continuation'])('writes a valid %s starter config and its JSON Schema, linked by the first line', async (name) => {
    const file = join(dir, `${name}.yaml`);
    const run = await runCliInProcess(['init', name, '-o', file]);
    expect(run.code, run.stderr).toBe(0);
    const text = readFileSync(file, 'utf8');
    expect(text.split('\n')[0]).toBe(`# yaml-language-server: $schema=./${name}.schema.json`);
    const schema = JSON.parse(readFileSync(join(dir, `${name}.schema.json`), 'utf8')) as {
      properties: Record<string, unknown>;
      additionalProperties?: unknown;
    };
    expect(Object.keys(schema.properties)).toContain('targets');
    expect(schema.properties).toHaveProperty('gate');
    // Every key shown is valid as written: the audit's own loader reads the file.
    const config = getAudit(name).loadConfig(file, []) as { targets: string[]; gate?: Record<string, unknown> };
    expect(config.targets).toEqual(['openai:gpt-4.1-mini']);
    expect(config.gate?.maxFailedCells).toBe(0.05);
    // …and every top-level key of the starter is a property of the schema.
    for (const key of text.matchAll(/^([a-zA-Z]+):/gmu)) expect(Object.keys(schema.properties)).toContain(key[1]);
    // A second init refuses to overwrite without --force.
    expect((await runCliInProcess(['init', name, '-o', file])).code).toBe(2);
  });

  it('keeps the documented gate sections of the persona and memory starters', async () => {
    const persona = getAudit('persona').loadConfig(join(dir, 'persona.yaml'), []) as { gate?: unknown; limits: { maxCostUsd?: number } };
    expect(persona.gate).toEqual({ significantDrift: true, maxDrift: 0.3, maxFailedCells: 0.05 });
    expect(persona.limits.maxCostUsd).toBe(5);
    const memory = getAudit('memory').loadConfig(join(dir, 'memory.yaml'), []) as { labeler: string; gate?: { maxElevation?: number } };
    expect(memory.labeler).toBe('anthropic:claude-sonnet-4-5');
    expect(memory.gate?.maxElevation).toBe(0.5);
  });

  it('refuses an audit without a starter, naming the ones that have one', async () => {
    const run = await runCliInProcess(['init', 'nonsense', '-o', '-']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/must be persona, memory or continuation, got "nonsense"/);
  });
});

describe('echolens schema', () => {
  it.each(['persona', 'memory', 'continuation'])('prints the JSON Schema of the %s config, with its targets', async (name) => {
    const run = await runCliInProcess(['schema', name]);
    expect(run.code, run.stderr).toBe(0);
    const schema = JSON.parse(run.stdout) as { type: string; title: string; properties: Record<string, unknown> };
    expect(schema.type).toBe('object');
    expect(schema.title).toBe(`echolens ${name} config`);
    expect(schema.properties).toHaveProperty('targets');
  });
});
