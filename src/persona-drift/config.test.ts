import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { loadPersonaConfig, personaConfigFromFlags } from './run.js';

describe('persona config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-config-'));

  it('builds a complete config from command-line flags alone, with the paper defaults', () => {
    const config = personaConfigFromFlags(['sessions=["~/s.jsonl", "rel.jsonl"]', 'targets=["sim:persona"]', 'judges=["sim:judge"]']);
    expect(config.sessions).toEqual([join(homedir(), 's.jsonl'), join(process.cwd(), 'rel.jsonl')]);
    expect(config).toMatchObject({ render: 'flat', windowChars: 30000, arms: ['real', 'filler'], positions: [{ uniform: 12 }] });
    expect(config.probes.categories).toEqual(['coding_self']);
    expect(config.judgeDecoding).toEqual({ temperature: 0, maxTokens: 400 });
  });

  it('names the missing key when flags are not enough', () => {
    expect(() => personaConfigFromFlags(['targets=["sim:persona"]'])).toThrow(/sessions: .*command line/u);
  });

  it('names file, line and key of a bad value, and resolves sessions next to the file', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\nwindowChars: -5\n');
    expect(() => loadPersonaConfig(file)).toThrow(`${file}:4: windowChars:`);
    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\n');
    expect(loadPersonaConfig(good).sessions).toEqual([join(dir, 'a.jsonl')]);
  });

  it('refuses probes without a judge and unknown keys', () => {
    const file = join(dir, 'nojudge.yaml');
    writeFileSync(file, 'sessions: [a.jsonl]\ntargets: [sim:persona]\n');
    expect(() => loadPersonaConfig(file)).toThrow(/judges: the probe surface needs at least one judge/u);
    const typo = join(dir, 'typo.yaml');
    writeFileSync(typo, 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\nsampels: 3\n');
    expect(() => loadPersonaConfig(typo)).toThrow(/sampels|Unrecognized key/u);
  });
});
